//go:build unix

package diffview

import (
	"os/exec"
	"testing"
)

// requireApplyTools fails the test unless git and patch, the oracles of
// TestPatchApplies, are installed.
func requireApplyTools(t *testing.T) {
	for _, tool := range []string{"git", "patch"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not installed: %v", tool, err)
		}
	}
}
