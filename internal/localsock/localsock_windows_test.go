package localsock

import (
	"os"
	"testing"
)

// leaveStaleEndpoint leaves a file naming a pipe that does not exist, as a
// server that died leaves it.
func leaveStaleEndpoint(t *testing.T, dir string) {
	t.Helper()
	if err := os.WriteFile(Endpoint(dir), []byte(`\\.\pipe\ckpt-00000000000000000000000000000000`), 0o600); err != nil {
		t.Fatal(err)
	}
}

// The endpoint file names the pipe, and that pipe is the one served.
func TestEndpointNamesAServedPipe(t *testing.T) {
	dir := t.TempDir()
	ln, err := Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	echo(ln)
	name, err := os.ReadFile(Endpoint(dir))
	if err != nil || len(name) == 0 {
		t.Fatalf("endpoint file: %q, %v", name, err)
	}
	c, err := Dial(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := c.RemoteAddr().String(); got != string(name) {
		t.Fatalf("dialled %q, endpoint names %q", got, name)
	}
}
