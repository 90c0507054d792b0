//go:build unix

package localsock

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
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

// A store whose socket path is longer than a socket address holds can
// have no server (Listen fails there): Dial says ErrNoServer, so that its
// commands open the store themselves rather than fail as if a server
// could not be reached.
func TestDialWhereNoSocketCanBeIsNoServer(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 120))
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := Dial(dir); !errors.Is(err, ErrNoServer) {
		t.Fatalf("Dial with a %d-byte socket path = %v, want ErrNoServer", len(Endpoint(dir)), err)
	}
}
