//go:build unix

package localsock

import (
	"os"
	"testing"
)

// leaveStaleEndpoint leaves the socket of a listener that is gone.
func leaveStaleEndpoint(t *testing.T, dir string) {
	t.Helper()
	ln, err := Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*socketListener).SetUnlinkOnClose(false)
	ln.Close()
}

func TestSocketIsTheOwnersOnly(t *testing.T) {
	dir := t.TempDir()
	ln, err := Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	fi, err := os.Lstat(Endpoint(dir))
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("endpoint %v, %v; want a socket of mode 0600", fi, err)
	}
	if ln.Addr().String() != Endpoint(dir) {
		t.Fatalf("Addr %q, want %q", ln.Addr(), Endpoint(dir))
	}
}
