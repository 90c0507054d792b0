package testbound

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// startAttempts is how many times Start tries to start a child process.
const startAttempts = 3

// Start starts the command build makes and returns it, making and starting
// a new one when the start fails: Wine's CreateProcess fails now and then
// ("Internal error"), and a child that never started changed nothing.
// build runs once per attempt, since a command whose start failed (its
// pipes closed) cannot start again; what it sets up for the child (pipes,
// buffers) must be set up anew each time. The third failure fails t.
func Start(t testing.TB, build func() *exec.Cmd) *exec.Cmd {
	t.Helper()
	for attempt := 1; ; attempt++ {
		cmd := build()
		err := cmd.Start()
		if err == nil {
			return cmd
		}
		if attempt == startAttempts {
			t.Fatalf("start %s: %v", filepath.Base(cmd.Path), err)
		}
		t.Logf("start of %s, attempt %d: %v", filepath.Base(cmd.Path), attempt, err)
	}
}
