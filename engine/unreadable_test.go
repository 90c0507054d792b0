package engine

import (
	"context"
	"errors"
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
	write("sub/s1", "s1b")
	save(cold, "two")
	watched := open(filepath.Join(filepath.Dir(store), "watched"), true)
	save(watched, "two")
	// A task saved under other rules (sub/s2 excluded) beside them.
	other := func(msg string) *SaveResult {
		t.Helper()
		res, err := watched.Save(ctx, SaveOptions{Task: "other", Message: msg, Capture: &Capture{Exclude: []string{"s2"}}})
		if err != nil {
			t.Fatalf("save %s under other rules: %v", msg, err)
		}
		return res
	}
	other("other one")
	// The cold store forgets what it read of the root (its stat-cache
	// record): it keeps the base checkpoint's versions instead.
	b := cold.db.NewBatch()
	b.DeleteDirCache("")
	if err := errors.Join(b.Commit(), b.Close()); err != nil {
		t.Fatal(err)
	}

	for rel, mode := range map[string]os.FileMode{"f": 0, "sub": 0} {
		if err := os.Chmod(filepath.Join(ws, rel), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("g", "g2")
	// Under other rules the unlistable sub keeps its version in that
	// task's base (s1 alone), not the tree the stat cache records under
	// the Engine's rules, which holds what the other rules exclude.
	if res := other("other two"); !slices.Equal(keptOf(res), []string{"f", "sub"}) {
		t.Fatalf("save under other rules of unreadable f and sub: skipped %+v; want both kept", res.Skipped)
	}
	if ents, err := watched.Ls(ctx, "other", "@2", "sub"); err != nil || len(ents) != 1 || ents[0].Path != "sub/s1" {
		t.Fatalf("sub in the other task's @2: %+v, %v; want sub/s1 alone, as its base holds", ents, err)
	}
	res := save(cold, "three")
	if kept := keptOf(res); !slices.Equal(kept, []string{"f", "sub"}) || res.Stats.Deleted != 0 || res.Stats.Modified != 1 {
		t.Fatalf("save of unreadable f and sub: skipped %+v, stats %+v; want both kept, g alone modified", res.Skipped, res.Stats)
	}
	if ents, err := cold.Ls(ctx, "", "@3", "sub"); err != nil || len(ents) != 2 {
		t.Fatalf("sub in @3: %v, %v; want s1 and s2 as last read", ents, err)
	}
	if got := catString(t, cold, "@3", "f"); got != "f2" {
		t.Fatalf("f in @3 = %q, want f2, as last read", got)
	}
	if res := save(watched, "three"); !sameRoot(t, cold, watched) || !slices.Equal(keptOf(res), []string{"f", "sub"}) {
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

	// The restore of @1 (f1, g1, sub/s1 s1) writes g and leaves f and
	// sub/s1 alone: what they hold now is in no checkpoint.
	watched.Close()
	rr, err := cold.Restore(ctx, "@1", RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var unread []string
	for _, c := range rr.Conflicts {
		if c.Kind == ConflictUnread {
			unread = append(unread, c.Path)
		}
	}
	if slices.Sort(unread); len(rr.Conflicts) != 2 || !slices.Equal(unread, []string{"f", "sub/s1"}) {
		t.Fatalf("conflicts %+v, want f and sub/s1, unread", rr.Conflicts)
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
	if err := os.Chmod(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "sub", "s1")); err != nil || string(b) != "s1b" {
		t.Fatalf("the restore changed sub/s1 in the unlistable sub: %q, %v", b, err)
	}
}

// keptOf is the sorted paths res reports unreadable and kept.
func keptOf(res *SaveResult) []string {
	var kept []string
	for _, s := range res.Skipped {
		if s.Reason == "unreadable" && s.Kept {
			kept = append(kept, s.Path)
		}
	}
	slices.Sort(kept)
	return kept
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
