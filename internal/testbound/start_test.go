package testbound

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A command whose start fails is made and started again, and the one that
// started is returned.
func TestStartTriesAgainWhenTheStartFails(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no such program")
	attempts := 0
	cmd := Start(t, func() *exec.Cmd {
		if attempts++; attempts == 1 {
			return exec.Command(missing)
		}
		return exec.Command(os.Args[0], "-test.run=^$")
	})
	if err := cmd.Wait(); err != nil || attempts < 2 {
		t.Fatalf("started after %d attempts, wait: %v; want a second attempt and a clean exit", attempts, err)
	}
}
