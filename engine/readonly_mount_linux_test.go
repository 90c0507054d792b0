package engine

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/ckpt/ckpt/internal/testmount"
)

// A store reached through a read-only mount (a backup drive, a
// container's read-only volume) is read: a read-only Open lists, diffs,
// reads files and verifies; a writer's Open fails at once with
// ErrNotWritable; and the store's lock is the one lock of its files, so a
// reader there is kept out while a writer holds the store through a
// writable mount.
func TestAStoreOnAReadOnlyMountIsRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws, store := t.TempDir(), filepath.Join(t.TempDir(), "store")
	for _, content := range []string{"one", "two"} {
		if err := os.WriteFile(filepath.Join(ws, "a"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := saveIn(ws, store, content); err != nil {
			t.Fatal(err)
		}
	}
	ro := testmount.ReadOnly(t, store)

	if _, err := Open(ctx, ws, Options{StoreDir: ro}); !errors.Is(err, ErrNotWritable) || !errors.Is(err, syscall.EROFS) {
		t.Fatalf("writer's open of a read-only mount: %v, want ErrNotWritable for EROFS", err)
	}
	e, err := Open(ctx, ws, Options{StoreDir: ro, ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open of a read-only mount: %v", err)
	}
	if log, err := e.List(ctx, DefaultTask); err != nil || len(log.Checkpoints) != 2 {
		t.Fatalf("list: %+v, %v; want 2 checkpoints", log, err)
	}
	d, err := e.Diff(ctx, "@1", "@2", DiffOptions{})
	if err != nil || len(d.Changes) != 1 || d.Changes[0].Path != "a" {
		t.Fatalf("diff @1 @2: %+v, %v; want a modified", d, err)
	}
	rc, _, err := e.Cat(ctx, DefaultTask, "@1", "a")
	if err != nil {
		t.Fatalf("cat @1 a: %v", err)
	}
	b, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || string(b) != "one" {
		t.Fatalf("cat @1 a = %q, %v; want \"one\"", b, err)
	}
	mustVerify(t, e)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	w, err := Open(ctx, ws, Options{StoreDir: store})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := Open(ctx, ws, Options{StoreDir: ro, ReadOnly: true}); !errors.Is(err, ErrBusy) {
		t.Fatalf("read-only open while a writer holds the store through a writable mount: %v, want ErrBusy", err)
	}
}
