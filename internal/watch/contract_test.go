//go:build linux || windows || darwin

package watch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// The tests of this file hold for every backend that watches (not the
// always-walk one).

// startWalked starts a watcher on root and plays the engine's first save:
// the All of the first Changes, then a full walk that watches every
// directory before reading it, then the Changes that follows it.
func startWalked(t testing.TB, root string, opts Options) (*Watcher, *mirror) {
	t.Helper()
	w, err := Start(context.Background(), root, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	m := &mirror{root: root, w: w, list: map[string]entry{}}
	if c := w.Changes(); !c.All || c.Reasons&ReasonStart == 0 {
		t.Fatalf("first Changes = %+v, want All with ReasonStart", c)
	}
	if err := m.apply(Changes{All: true}); err != nil {
		t.Fatal(err)
	}
	if err := m.apply(w.Changes()); err != nil {
		t.Fatal(err)
	}
	return w, m
}

// seedTree builds the starting workspace.
func seedTree(t testing.TB, root string, dirs, files int) {
	for i := range dirs {
		d := filepath.Join(root, fmt.Sprintf("d%d", i%5), fmt.Sprintf("e%d", i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for j := range files {
			if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d", j)), []byte(d), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	os.MkdirAll(filepath.Join(root, "node_modules", "pkg"), 0o755)
}

// TestFullWalkLeavesNothingDirty: a walk that watches each directory
// before reading it leaves nothing to re-read, so the save after the first
// one costs what changed.
func TestFullWalkLeavesNothingDirty(t *testing.T) {
	root := t.TempDir()
	seedTree(t, root, 10, 2)
	w, err := Start(context.Background(), root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	m := &mirror{root: root, w: w, list: map[string]entry{}}
	if err := m.apply(w.Changes()); err != nil {
		t.Fatal(err)
	}
	if c := w.Changes(); c.All || len(c.Dirty)+len(c.Rescan) > 0 {
		t.Fatalf("Changes right after the full walk = %+v, want nothing", c)
	}
	if err := os.WriteFile(filepath.Join(root, "d3", "e3", "f0"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := w.Changes(); c.All || !slices.Equal(c.Dirty, []string{"d3/e3"}) || len(c.Rescan) > 0 {
		t.Fatalf("Changes after one write = %+v, want only d3/e3 dirty", c)
	}
}

// TestMaxPendingOverflows: changes spread over more directories than
// MaxPending widen to All, drop every watch, and count as an overflow;
// fewer stay precise.
func TestMaxPendingOverflows(t *testing.T) {
	root := t.TempDir()
	seedTree(t, root, 10, 1)
	w, m := startWalked(t, root, Options{MaxPending: 4})
	touch := func(dirs ...string) {
		for _, d := range dirs {
			if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(d), "f0"), []byte(d), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	touch("d1/e1", "d2/e2")
	if c := w.Changes(); c.All || len(c.Dirty) != 2 {
		t.Fatalf("two dirty directories under MaxPending 4: %+v", c)
	}
	touch("d0/e0", "d1/e1", "d2/e2", "d3/e3", "d4/e4")
	c := w.Changes()
	if !c.All || c.Reasons&ReasonOverflow == 0 {
		t.Fatalf("five dirty directories under MaxPending 4: %+v, want All (overflow)", c)
	}
	if st := w.Stats(); st.Overflows != 1 || st.Watches != 1 {
		t.Fatalf("stats after the bound was exceeded: %+v, want 1 overflow and only the root watched", st)
	}
	if err := m.apply(c); err != nil { // re-watches every directory
		t.Fatal(err)
	}
	touch("d3/e3")
	if c := w.Changes(); c.All || !slices.Equal(c.Dirty, []string{"d3/e3"}) {
		t.Fatalf("after the walk that followed the overflow: %+v, want d3/e3 dirty", c)
	}
}

func TestUnchangedTreeReportsNothing(t *testing.T) {
	root := t.TempDir()
	seedTree(t, root, 10, 2)
	w, _ := startWalked(t, root, Options{})
	for range 3 {
		if c := w.Changes(); c.All || len(c.Dirty)+len(c.Rescan) > 0 {
			t.Fatalf("Changes on an unchanged tree = %+v", c)
		}
	}
}

// TestChangesIncludesWritesBeforeTheCall checks the ordering barrier: an
// operation that returned before Changes was called is always reported,
// with no pause in between.
func TestChangesIncludesWritesBeforeTheCall(t *testing.T) {
	root := t.TempDir()
	seedTree(t, root, 10, 1)
	w, _ := startWalked(t, root, Options{})
	for i := range barrierWrites {
		dir := fmt.Sprintf("d%d/e%d", i%5, i%10)
		p := filepath.Join(root, filepath.FromSlash(dir), "f0")
		if err := os.WriteFile(p, []byte{byte(i)}, 0o644); err != nil {
			t.Fatal(err)
		}
		c := w.Changes()
		if c.All || !slices.Contains(c.Dirty, dir) {
			t.Fatalf("write %d to %s not in the Changes that followed it: %+v", i, dir, c)
		}
	}
}

func TestClockJumpReportsAll(t *testing.T) {
	root := t.TempDir()
	wall, mono := time.Unix(1e9, 0), time.Duration(0)
	clock := func() (time.Time, time.Duration) { return wall, mono }
	w, _ := startWalked(t, root, Options{clock: clock})
	wall, mono = wall.Add(time.Second), mono+time.Second
	if c := w.Changes(); c.All {
		t.Fatalf("clocks in step: %+v", c)
	}
	wall = wall.Add(-time.Hour)
	if c := w.Changes(); !c.All || c.Reasons&ReasonClockJump == 0 {
		t.Fatalf("wall clock an hour back: %+v, want All", c)
	}
	if c := w.Changes(); c.All {
		t.Fatalf("after the jump was reported: %+v", c)
	}
}

// TestRuleFileOutsideTree watches root/.git/info/exclude before .git
// exists: creating each missing component, then editing the file, reports
// All.
func TestRuleFileOutsideTree(t *testing.T) {
	root := t.TempDir()
	exclude := filepath.Join(root, ".git", "info", "exclude")
	w, _ := startWalked(t, root, Options{RuleFiles: []string{exclude}})
	steps := []func() error{
		func() error { return os.Mkdir(filepath.Join(root, ".git"), 0o755) },
		func() error { return os.Mkdir(filepath.Join(root, ".git", "info"), 0o755) },
		func() error { return os.WriteFile(exclude, []byte("*.o\n"), 0o644) },
		func() error { return os.WriteFile(exclude, []byte("*.a\n"), 0o644) },
		func() error { return os.Remove(exclude) },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatal(err)
		}
		if c := w.Changes(); !c.All || c.Reasons&ReasonRuleFile == 0 {
			t.Fatalf("step %d: %+v, want All for the rule file", i, c)
		}
	}
	if err := os.WriteFile(filepath.Join(root, ".git", "info", "other"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if c := w.Changes(); c.All {
		t.Fatalf("another file next to the rule file: %+v", c)
	}
}

func TestIgnoreFileChangeRescansItsDirectory(t *testing.T) {
	root := t.TempDir()
	seedTree(t, root, 5, 1)
	w, _ := startWalked(t, root, Options{})
	if err := os.WriteFile(filepath.Join(root, "d1", ".ckptignore"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := w.Changes()
	if !slices.Equal(c.Rescan, []string{"d1"}) || c.Reasons&ReasonRuleFile == 0 {
		t.Fatalf("Changes = %+v, want Rescan of d1", c)
	}
}

// TestRootLostAndBack takes the workspace root away, by moving it and by
// removing it: All until it is back, then the watcher works again.
func TestRootLostAndBack(t *testing.T) {
	root := filepath.Join(t.TempDir(), "ws")
	seedTree(t, root, 3, 1)
	away := filepath.Join(filepath.Dir(root), "away")
	for _, lose := range []struct {
		how  string
		take func() error
	}{
		{"moved away", func() error { return os.Rename(root, away) }},
		{"removed", func() error { return os.RemoveAll(root) }},
	} {
		w, m := startWalked(t, root, Options{})
		if err := lose.take(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(root); err == nil {
			// Wine defers removing a directory until the last handle
			// to it, the watcher's, is closed: the root is still there.
			t.Logf("root %s: still present while watched; checking that its emptying is reported", lose.how)
			if c := w.Changes(); !c.All && !slices.Contains(c.Dirty, "") {
				t.Fatalf("root %s but present: %+v, want the root dirty", lose.how, c)
			}
			w.Close()
			continue
		}
		for range 2 {
			if c := w.Changes(); !c.All || c.Reasons&ReasonRootLost == 0 {
				t.Fatalf("root %s: %+v, want All", lose.how, c)
			}
		}
		seedTree(t, root, 2, 1)
		if c := w.Changes(); !c.All {
			t.Fatalf("root %s and back: %+v, want All once more", lose.how, c)
		}
		if err := m.apply(Changes{All: true}); err != nil {
			t.Fatal(err)
		}
		m.apply(w.Changes())
		os.WriteFile(filepath.Join(root, "d1", "e1", "new"), nil, 0o644)
		if c := w.Changes(); c.All || !slices.Contains(c.Dirty, "d1/e1") {
			t.Fatalf("root %s, after it came back: %+v, want d1/e1 dirty", lose.how, c)
		}
		w.Close()
	}
}

func TestCloseEndsReader(t *testing.T) {
	w, err := Start(context.Background(), t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-backendDone(w):
	default:
		t.Fatal("reader still running after Close")
	}
	if c := w.Changes(); !c.All || c.Reasons&ReasonClosed == 0 {
		t.Fatalf("Changes after Close = %+v", c)
	}
	w.Watch("x")
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}
