package main

import (
	"os"
	"os/exec"
	"testing"
)

// stopServer ends a listening server. Windows has no SIGTERM to send a
// console process from here, so it is killed; the endpoint it leaves is a
// stale one, which TestStaleEndpointIsIgnoredAndRemoved covers.
func stopServer(t *testing.T, srv *exec.Cmd, _ string) {
	t.Helper()
	srv.Process.Kill()
	srv.Wait()
}

// checkEndpointIsPrivate checks that the endpoint file is there; the pipe
// it names has a descriptor for the current user only, which package
// localsock sets.
func checkEndpointIsPrivate(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no endpoint file: %v", err)
	}
}
