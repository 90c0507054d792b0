package engine

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/internal/testtree"
)

// A path filter that names nothing anywhere is refused by every operation
// that takes one, and an empty path never stands for the whole workspace.
func TestPathFilterThatMatchesNothingIsRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"a": testtree.File{Content: "a1"}, "d": testtree.Dir{"x": testtree.File{Content: "x1"}}})
	f.save("one")
	f.write("a", "a2")
	f.save("two")
	ctx := context.Background()
	for _, paths := range [][]string{{"nowhere"}, {"a", "nowhere"}, {"d/x/under-a-file"}, {""}, {"a", ""}} {
		ops := map[string]func() error{
			"restore": func() error { _, err := f.e.Restore(ctx, "@1", RestoreOptions{Paths: paths}); return err },
			"diff": func() error {
				_, err := f.e.Diff(ctx, "@1", "@2", DiffOptions{Paths: paths})
				return err
			},
			"diff with the workspace": func() error { _, err := f.e.Diff(ctx, "@1", "", DiffOptions{Paths: paths}); return err },
			"history":                 func() error { _, err := f.e.History(ctx, HistoryOptions{Paths: paths}); return err },
			"export": func() error {
				_, err := f.e.Export(ctx, "@1", filepath.Join(t.TempDir(), "out"), ExportOptions{Paths: paths})
				return err
			},
			"archive": func() error {
				_, err := f.e.WriteArchive(ctx, "@1", &bytes.Buffer{}, ArchiveTar, ExportOptions{Paths: paths})
				return err
			},
		}
		for name, op := range ops {
			err := op()
			if !errors.Is(err, ErrBadRequest) {
				t.Errorf("%s %q: err = %v, want ErrBadRequest", name, paths, err)
				continue
			}
			if want := "nowhere"; paths[len(paths)-1] == want && !strings.Contains(err.Error(), want) {
				t.Errorf("%s %q: %v does not name the path", name, paths, err)
			}
		}
	}
	if got := f.readFile("a"); got != "a2" {
		t.Fatalf("a refused restore changed a: %q", got)
	}
}

// A path that exists on one side only, or that exists but did not change,
// matches: the operation runs and reports what it found.
func TestPathFilterMatchesEitherSide(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"a": testtree.File{Content: "a1"}, "keep": testtree.File{Content: "k"}})
	f.save("one")
	f.write("new", "n")
	ctx := context.Background()
	d, err := f.e.Diff(ctx, "@1", "", DiffOptions{Paths: []string{"new"}})
	if err != nil || statuses(d.Changes) != "added new" {
		t.Fatalf("diff of a path only in the workspace = %v, %v", d, err)
	}
	if d, err = f.e.Diff(ctx, "@1", "", DiffOptions{Paths: []string{"keep"}}); err != nil || len(d.Changes) != 0 {
		t.Fatalf("diff of an unchanged path = %v, %v", d, err)
	}
	if _, err := f.e.History(ctx, HistoryOptions{Paths: []string{"keep", "."}}); err != nil {
		t.Fatalf("history of a path and the root: %v", err)
	}
	f.restore("@1", RestoreOptions{Paths: []string{"new"}, Force: true})
	if _, err := os.Lstat(filepath.Join(f.ws, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("restoring a path only in the workspace should remove it: %v", err)
	}
}
