package engine

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/internal/frozen"
	"github.com/ckpt/ckpt/internal/testtree"
)

var updateFrozen = flag.Bool("update-frozen", false, "write testdata/store-vN again from the frozen recipe")

// The store frozen under testdata (written by this format version) opens,
// restores every checkpoint of its recipe byte for byte and verifies:
// every later version must keep passing this against the same files.
func TestFrozenStore(t *testing.T) {
	if index.FormatVersion != frozen.Version {
		t.Fatalf("the store format is version %d, the frozen store version %d: freeze a store of the new version beside the old one", index.FormatVersion, frozen.Version)
	}
	if *updateFrozen {
		writeFrozen(t)
	}
	for _, v := range frozen.Versions {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) { checkFrozenStore(t, frozen.Copy(t, v)) })
	}
}

// checkFrozenStore restores every checkpoint of the frozen store at store
// and verifies it; a store of an older format then records the current
// one, and a save into it reads back.
func checkFrozenStore(t *testing.T, store string) {
	ctx := context.Background()
	ws := t.TempDir()
	rehome(t, store, ws)
	e, err := Open(ctx, ws, Options{StoreDir: store})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, s := range frozen.Steps() {
		id := checkpointByMessage(t, e, s.Task, s.Message)
		if _, err := e.Restore(ctx, id.String(), RestoreOptions{Task: s.Task, NoBackup: true, Force: true}); err != nil {
			t.Fatalf("restore %q: %v", s.Message, err)
		}
		got, err := testtree.Read(ws, nil)
		if err != nil {
			t.Fatal(err)
		}
		if d := testtree.Diff(frozen.Expected(t, s), got); d != "" {
			t.Errorf("restore of %q differs from the recipe:\n%s", s.Message, d)
		}
	}
	rep, err := e.Verify(ctx, VerifyOptions{})
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %v, %+v", err, rep)
	}
	if m, _, err := e.db.Meta(); err != nil || m.FormatVersion != index.FormatVersion {
		t.Fatalf("meta after opening for writing: %+v, %v; want format version %d", m, err, index.FormatVersion)
	}
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("written after freezing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Save(ctx, SaveOptions{Task: "other", Message: "after freezing"}); err != nil {
		t.Fatal(err)
	}
	if rep, err := e.Verify(ctx, VerifyOptions{}); err != nil || !rep.OK() {
		t.Fatalf("verify after a save: %v, %+v", err, rep)
	}
}

// checkpointByMessage returns the checkpoint of task saved with message.
func checkpointByMessage(t *testing.T, e *Engine, task, message string) ID {
	t.Helper()
	log, err := e.List(context.Background(), task)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range log.Checkpoints {
		if c.Message == message {
			return c.ID
		}
	}
	t.Fatalf("task %s has no checkpoint %q", task, message)
	return ID{}
}

// rehome records ws as the workspace of the store copy at store: the
// frozen store records the directory it was written from.
func rehome(t *testing.T, store, ws string) {
	t.Helper()
	real, err := filepath.EvalSymlinks(ws)
	if err != nil {
		t.Fatal(err)
	}
	db, err := index.Open(filepath.Join(store, "index"), index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m, ok, err := db.Meta()
	if err != nil || !ok {
		t.Fatalf("meta of the frozen store: %v (found %v)", err, ok)
	}
	m.Workspace = real
	b := db.NewBatch()
	defer b.Close()
	b.SetMeta(m)
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
}

// writeFrozen saves the recipe's steps into a new store and makes it the
// frozen store.
func writeFrozen(t *testing.T) {
	ctx := context.Background()
	ws, store := t.TempDir(), filepath.Join(t.TempDir(), "store")
	var now time.Time
	e, err := Open(ctx, ws, Options{StoreDir: store, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range frozen.Steps() {
		entries, err := os.ReadDir(ws)
		if err != nil {
			t.Fatal(err)
		}
		for _, ent := range entries {
			if err := os.RemoveAll(filepath.Join(ws, ent.Name())); err != nil {
				t.Fatal(err)
			}
		}
		if err := testtree.Write(ws, s.Tree); err != nil {
			t.Fatal(err)
		}
		now = s.Time
		if _, err := e.Save(ctx, SaveOptions{Task: s.Task, Message: s.Message}); err != nil {
			t.Fatalf("save %q: %v", s.Message, err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := frozen.Replace(store); err != nil {
		t.Fatal(err)
	}
}
