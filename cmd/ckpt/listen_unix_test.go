//go:build unix

package main

import (
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/ckpt/ckpt/internal/localsock"
)

// stopServer stops a listening server as a user would, with SIGTERM, and
// checks that it stopped cleanly and removed its socket.
func stopServer(t *testing.T, srv *exec.Cmd, store string) {
	t.Helper()
	if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := srv.Wait(); err != nil {
		t.Fatalf("server after SIGTERM: %v", err)
	}
	if _, err := os.Lstat(localsock.Endpoint(store)); !os.IsNotExist(err) {
		t.Fatalf("socket left after the server stopped: %v", err)
	}
}

// checkEndpointIsPrivate checks that the server's socket is its owner's only.
func checkEndpointIsPrivate(t *testing.T, path string) {
	t.Helper()
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket %v, %v; want a socket of mode 0600", fi, err)
	}
}
