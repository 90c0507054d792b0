package engine

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A path a save may not read keeps, in the checkpoint, the version it
// last read, cold and watched alike, where it used to be recorded as
// deleted; a restore then leaves it alone (its content is in no
// checkpoint) and restores the rest. Run as a user whom permission bits
// bind.
func TestUnreadablePathsKeepTheirLastVersion(t *testing.T) {
	needDirPermissions(t)
	t.Parallel()
	const name = "TestUnreadablePathsKeepTheirLastVersion"
	if ws, store, ok := limitChild(name); ok {
		unreadableChild(t, ws, store)
		return
	}
	base, err := os.MkdirTemp("", "ckpt-unreadable-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.Chmod(filepath.Join(base, "ws", "f"), 0o644)
		os.Chmod(filepath.Join(base, "ws", "sub"), 0o755)
		os.RemoveAll(base)
	})
	ws := filepath.Join(base, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	binary, prefix := unprivileged(t, base)
	runLimitChild(t, binary, name, ws, filepath.Join(base, "store"), prefix...)
}

// unreadableChild is TestUnreadablePathsKeepTheirLastVersion in the
// unprivileged child.
func unreadableChild(t *testing.T, ws, store string) {
	ctx := context.Background()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(ws, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	open := func(dir string, watch bool) *Engine {
		t.Helper()
		e, err := Open(ctx, ws, Options{StoreDir: dir, Watch: watch})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}
	save := func(e *Engine, msg string) *SaveResult {
		t.Helper()
		res, err := e.Save(ctx, SaveOptions{Message: msg})
		if err != nil {
			t.Fatalf("save %s: %v", msg, err)
		}
		return res
	}
	write("f", "f1")
	write("g", "g1")
	write("sub/s1", "s1")
	write("sub/s2", "s2")
	cold := open(store, false)
	save(cold, "one")
	write("f", "f2")
	save(cold, "two")
	watched := open(filepath.Join(filepath.Dir(store), "watched"), true)
	save(watched, "two")

	for rel, mode := range map[string]os.FileMode{"f": 0, "sub": 0} {
		if err := os.Chmod(filepath.Join(ws, rel), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("g", "g2")
	res := save(cold, "three")
	var kept []string
	for _, s := range res.Skipped {
		if s.Reason == "unreadable" && s.Kept {
			kept = append(kept, s.Path)
		}
	}
	if !slices.Equal(kept, []string{"f", "sub"}) || res.Stats.Deleted != 0 || res.Stats.Modified != 1 {
		t.Fatalf("save of unreadable f and sub: skipped %+v, stats %+v; want both kept, g alone modified", res.Skipped, res.Stats)
	}
	if ents, err := cold.Ls(ctx, "", "@3", "sub"); err != nil || len(ents) != 2 {
		t.Fatalf("sub in @3: %v, %v; want s1 and s2 as last read", ents, err)
	}
	if got := catString(t, cold, "@3", "f"); got != "f2" {
		t.Fatalf("f in @3 = %q, want f2, as last read", got)
	}
	if res := save(watched, "three"); !sameRoot(t, cold, watched) {
		t.Fatalf("the watched save differs from the cold one: skipped %+v", res.Skipped)
	}
	// Saved again with nothing changed: the watched save replays the
	// directory from its stat cache, kept entries and all.
	if res := save(watched, "again"); res.Created || !sameRoot(t, cold, watched) {
		t.Fatalf("a watched save with nothing changed: created %v, skipped %+v", res.Created, res.Skipped)
	}
	if res := save(cold, "again"); res.Created {
		t.Fatalf("a cold save with nothing changed created @%d: skipped %+v", res.Seq, res.Skipped)
	}

	// The restore of @1 (f1, g1) writes g and leaves f alone: what f holds
	// now is in no checkpoint.
	watched.Close()
	rr, err := cold.Restore(ctx, "@1", RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Conflicts) != 1 || rr.Conflicts[0].Path != "f" || rr.Conflicts[0].Kind != ConflictUnread {
		t.Fatalf("conflicts %+v, want f, unread", rr.Conflicts)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "g")); err != nil || string(b) != "g1" {
		t.Fatalf("g after the restore: %q, %v", b, err)
	}
	if err := os.Chmod(filepath.Join(ws, "f"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "f")); err != nil || string(b) != "f2" {
		t.Fatalf("the restore changed the unreadable f: %q, %v", b, err)
	}
}

// catString is the content of rel in checkpoint ref of e.
func catString(t *testing.T, e *Engine, ref, rel string) string {
	t.Helper()
	rc, _, err := e.Cat(context.Background(), "", ref, rel)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sameRoot reports whether the heads of a and b hold the same tree.
func sameRoot(t *testing.T, a, b *Engine) bool {
	t.Helper()
	root := func(e *Engine) ID {
		log, err := e.List(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		return log.Checkpoints[len(log.Checkpoints)-1].Root
	}
	return root(a) == root(b)
}
