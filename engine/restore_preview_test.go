package engine

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ckpt/ckpt/internal/testtree"
)

// A dry run reports what the restore it previews then does: the same
// paths written and deleted, the same conflicts, whichever way a
// directory the target does not hold (or holds as a file) turns out to
// be not empty.
func TestRestoreDryRunReportsWhatTheRestoreDoes(t *testing.T) {
	t.Parallel()
	// Each case saves @1 with d a file, then @2 with d a directory holding
	// a, and prepares the workspace before both restores of @1.
	for _, tc := range []struct {
		name    string
		prepare func(f *fixture)
		opts    RestoreOptions
	}{
		{"dir-holds: an ignored file in the directory a file replaces", func(f *fixture) {
			f.write("d/x.log", "ignored\n")
		}, RestoreOptions{}},
		{"forced: the directory goes, ignored file and all", func(f *fixture) {
			f.write("d/x.log", "ignored\n")
		}, RestoreOptions{Force: true}},
		{"blocked-below: an unsaved edit in the directory a file replaces", func(f *fixture) {
			f.write("d/a", "unsaved edit\n")
		}, RestoreOptions{NoBackup: true}},
		{"left alone: an ignored file in a directory the target lacks", func(f *fixture) {
			f.write("g/z", "captured\n")
			f.save("three")
			f.write("g/y.log", "ignored\n")
		}, RestoreOptions{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, testtree.Dir{"d": testtree.File{Content: "a file\n"}})
			f.write(".gitignore", "*.log\n")
			f.save("one")
			if err := os.Remove(filepath.Join(f.ws, "d")); err != nil {
				t.Fatal(err)
			}
			f.write("d/a", "in a directory\n")
			f.save("two")
			tc.prepare(f)
			dry := tc.opts
			dry.DryRun = true
			want := f.restore("@1", dry)
			got := f.restore("@1", tc.opts)
			if !slices.Equal(want.Written, got.Written) || !slices.Equal(want.Deleted, got.Deleted) || !slices.Equal(want.Conflicts, got.Conflicts) {
				t.Fatalf("dry run: written %v, deleted %v, conflicts %v\nrestore: written %v, deleted %v, conflicts %v",
					want.Written, want.Deleted, want.Conflicts, got.Written, got.Deleted, got.Conflicts)
			}
		})
	}
}
