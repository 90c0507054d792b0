package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ckpt/ckpt/internal/testtree"
)

func TestStoreThatHoldsTheWorkspaceIsRefused(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	ws := filepath.Join(parent, "w")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := testtree.Write(ws, testtree.Dir{"a": testtree.File{Content: "a\n"}}); err != nil {
		t.Fatal(err)
	}
	stores := map[string]string{
		"the workspace":          ws,
		"the workspace, unclean": ws + "/./",
		"the workspace's parent": parent,
		"the root":               filepath.VolumeName(ws) + string(filepath.Separator),
	}
	if symlinksWork(t) {
		link := filepath.Join(t.TempDir(), "link-to-w")
		if err := os.Symlink(ws, link); err != nil {
			t.Fatal(err)
		}
		stores["a symlink to the workspace"] = link
	}
	for name, store := range stores {
		_, err := Open(context.Background(), ws, Options{StoreDir: store})
		if !errors.Is(err, ErrStoreHoldsWorkspace) {
			t.Errorf("store %s: err = %v, want ErrStoreHoldsWorkspace", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "lock")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused open wrote into the workspace: %v", err)
	}

	// A store inside the workspace stays allowed, excluded from saves, and
	// survives a restore.
	f := &fixture{t: t, ws: ws, store: filepath.Join(ws, ".ckpt-store")}
	f.open(Options{})
	f.save("one")
	f.write("b", "b\n")
	f.save("two")
	res := f.restore("@1", RestoreOptions{})
	if len(res.Conflicts) != 0 || len(res.Deleted) != 1 || res.Deleted[0] != "b" {
		t.Fatalf("restore with the store inside: deleted %v, conflicts %v", res.Deleted, res.Conflicts)
	}
	if rep, err := f.e.Verify(context.Background(), VerifyOptions{}); err != nil || !rep.OK() || rep.Checkpoints != 2 {
		t.Fatalf("verify after restore: %+v, %v", rep, err)
	}
}

func TestStoreNextToTheWorkspaceIsAccepted(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	ws := filepath.Join(parent, "w")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	// "w-store" shares a prefix with "w" but is not its ancestor.
	e, err := Open(context.Background(), ws, Options{StoreDir: filepath.Join(parent, "w-store", "not", "yet")})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
}
