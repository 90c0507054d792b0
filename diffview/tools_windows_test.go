package diffview

import "testing"

// requireApplyTools skips: git apply and patch, the oracles of
// TestPatchApplies, are not installed where the Windows tests run (the
// Wine prefix). A patch is bytes computed the same way on every OS, and
// the golden tests check those bytes here.
func requireApplyTools(t *testing.T) {
	t.Skip("git and patch (the oracles) are not installed in the Windows test environment")
}
