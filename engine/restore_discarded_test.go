package engine

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ckpt/ckpt/internal/testtree"
)

// What Force destroys that no checkpoint holds is listed, by a dry run as
// by the restore: the ignored files a directory the target replaces with
// a file held, an ignored file standing where the target puts one, and,
// without a backup, an unsaved edit replaced. Nothing else is: the
// captured files the restore rewrites are in the backup.
func TestForceListsWhatNoCheckpointHolds(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{
		".gitignore": testtree.File{Content: "*.log\nbuild.out\n"},
		"p":          testtree.File{Content: "p as a file\n"},
		"c.txt":      testtree.File{Content: "c one\n"},
		"e.txt":      testtree.File{Content: "e one\n"},
	})
	want := f.read()
	f.save("one")
	for _, name := range []string{"p", "build.out"} {
		if err := os.Remove(filepath.Join(f.ws, name)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	f.write("p/kept.txt", "captured\n")
	f.write("p/deep/x.log", "ignored\n")
	f.write("c.txt", "c two\n")
	f.save("two")
	f.write("build.out", "ignored where the target puts nothing\n")
	if err := os.WriteFile(filepath.Join(f.ws, ".gitignore"), []byte("*.log\nbuild.out\ne.txt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.write("e.txt", "e now ignored, where the target puts it\n")
	f.save("three")
	f.write("c.txt", "c unsaved\n")

	opts := RestoreOptions{Force: true, NoBackup: true}
	for _, dry := range []bool{true, false} {
		opts.DryRun = dry
		res := f.restore("@1", opts)
		if wantGone := []string{"c.txt", "e.txt", "p/deep/x.log"}; !slices.Equal(res.Discarded, wantGone) {
			t.Fatalf("dry run %v: discarded %q, want %q", dry, res.Discarded, wantGone)
		}
	}
	got := f.read()
	delete(got, "build.out") // uncaptured where the target has nothing: left alone
	assertSameTree(t, want, got)
}
