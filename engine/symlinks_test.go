package engine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/internal/faultfs"
	"github.com/ckpt/ckpt/internal/testtree"
)

// symlinksWork reports whether this process can create symlinks: Windows
// needs developer mode or a privilege for them, and Wine's
// CreateSymbolicLinkW reports success but creates nothing.
func symlinksWork(t *testing.T) bool {
	t.Helper()
	link := filepath.Join(t.TempDir(), "probe-link")
	if err := os.Symlink("target", link); err != nil {
		return false
	}
	fi, err := os.Lstat(link)
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}

// TestRestoreOfASymlinkThatCannotBeCreatedIsAConflict: where the file
// system refuses symlinks (Windows without the privilege, a file system
// without them) the link is a conflict naming the cause, nothing is written
// in its place, and the rest of the restore finishes.
func TestRestoreOfASymlinkThatCannotBeCreatedIsAConflict(t *testing.T) {
	if !symlinksWork(t) {
		t.Skip("the checkpoint must hold a symlink, which this process cannot create")
	}
	f := newFixture(t, testtree.Dir{"link": testtree.Symlink{Target: "a"}, "a": testtree.File{Content: "a1"}})
	f.save("one")
	if err := os.Remove(filepath.Join(f.ws, "link")); err != nil {
		t.Fatal(err)
	}
	f.write("a", "a2")
	f.save("two")
	refuse := newFaultPlan(-1, unsupportedSymlinkErrno, func(_ int, op faultfs.Op) bool { return op.Kind == faultfs.OpSymlink })
	f.open(refuse.options(f.store))
	res := f.restore("@1", RestoreOptions{})
	if len(res.Conflicts) != 1 || res.Conflicts[0].Path != "link" || res.Conflicts[0].Kind != ConflictFault ||
		!strings.Contains(res.Conflicts[0].Reason, "symlinks cannot be created here") {
		t.Fatalf("conflicts = %+v, want link refused", res.Conflicts)
	}
	if _, err := os.Lstat(filepath.Join(f.ws, "link")); !errors.Is(err, os.ErrNotExist) || f.readFile("a") != "a1" {
		t.Fatalf("link: %v; a = %q", err, f.readFile("a"))
	}
}
