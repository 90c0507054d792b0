package osfs

import (
	"os"
	"runtime"
	"testing"
)

// TestProbeNamesFindsThePlatformsRules checks the probe against what the
// test's temporary directory is known to do: Linux file systems match
// names byte for byte; Windows (NTFS, and Wine on a case-insensitive
// lookup) folds case but keeps normalization; the probe leaves nothing
// behind.
func TestProbeNamesFindsThePlatformsRules(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r, err := ProbeNames(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]NameRules{"linux": {}, "windows": {FoldCase: true}}
	if w, ok := want[runtime.GOOS]; ok && r != w {
		t.Fatalf("ProbeNames on %s = %+v, want %+v", runtime.GOOS, r, w)
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Fatalf("probe left %v (%v)", ents, err)
	}
	if _, err := ProbeNames(dir + "/missing"); err == nil {
		t.Fatal("probe of a missing directory succeeded")
	}
}
