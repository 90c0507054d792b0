package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/engine/internal/restore"
	"github.com/ckpt/ckpt/internal/testtree"
	"github.com/ckpt/ckpt/objects"
)

// A watched Engine serves an operation given another Capture under that
// Capture's rules (two hosts' clients with their own exclusion lists on
// one resident Engine), and its own watched saves stay what a cold walk
// captures: a save, a diff against the workspace and a restore under
// other rules leave no stat-cache record that a watched save would trust
// for its own rules.
func TestAnotherCaptureOnAWatchedEngine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixtureOpts(t, testtree.Dir{
		"a.txt": testtree.File{Content: "a1"}, "b.tmp": testtree.File{Content: "b1"},
		"dir": testtree.Dir{"c.txt": testtree.File{Content: "c1"}, "d.tmp": testtree.File{Content: "d1"}},
		"out": testtree.Dir{"e.txt": testtree.File{Content: "e1"}},
	}, Options{Watch: true})
	ageTree(t, f.ws)
	all := map[string]string{"a.txt": "a1", "b.tmp": "b1", "dir/c.txt": "c1", "dir/d.tmp": "d1", "out/e.txt": "e1"}
	own := f.save("own")
	checkContents(t, f.e, []record{{id: own.ID, task: DefaultTask, files: all}})

	other := &Capture{Exclude: []string{"*.tmp", "out/"}}
	saveOther := func(msg string) *SaveResult {
		t.Helper()
		res, err := f.e.Save(ctx, SaveOptions{Task: "other", Message: msg, Capture: other})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	o1 := saveOther("other one")
	checkContents(t, f.e, []record{{id: o1.ID, task: "other", files: map[string]string{"a.txt": "a1", "dir/c.txt": "c1"}}})

	// Nothing changed: the watched save under the Engine's rules keeps
	// everything, as a cold walk would.
	if res := f.save("own again"); res.Created || res.ID != own.ID {
		t.Fatalf("own save after another capture's: created %v, %s; want the unchanged head %s", res.Created, res.ID.Short(), own.ID.Short())
	}

	f.write("a.txt", "a2")
	f.write("dir/d.tmp", "d2")
	d, err := f.e.Diff(ctx, "@1", "", DiffOptions{Task: "other", Capture: other})
	if err != nil || len(d.Changes) != 1 || d.Changes[0].Path != "a.txt" {
		t.Fatalf("diff under the other capture: %+v, %v; want a.txt alone", d, err)
	}
	o2 := saveOther("other two")
	checkContents(t, f.e, []record{{id: o2.ID, task: "other", files: map[string]string{"a.txt": "a2", "dir/c.txt": "c1"}}})

	// The restore under the other rules rewinds a.txt and leaves what
	// they do not capture (dir/d.tmp, out/) alone.
	res, err := f.e.Restore(ctx, o1.ID.String(), RestoreOptions{Task: "other", Capture: other})
	if err != nil {
		t.Fatal(err)
	}
	if f.readFile("a.txt") != "a1" || f.readFile("dir/d.tmp") != "d2" || f.readFile("out/e.txt") != "e1" {
		t.Fatalf("after the other capture's restore (%+v): a.txt %q, dir/d.tmp %q, out/e.txt %q", res,
			f.readFile("a.txt"), f.readFile("dir/d.tmp"), f.readFile("out/e.txt"))
	}
	// With the watcher holding nothing pending (the own save) and the
	// restore's name probe behind it, a restore under the Engine's rules
	// would be vouched for; one under other rules must not be: no watched
	// save takes the workspace for the restored tree, which holds only
	// what those rules capture, in the task whose head it is (under the
	// Engine's rules) nor in another.
	f.save("own between the other restores")
	if _, err := f.e.Restore(ctx, o2.ID.String(), RestoreOptions{Task: "other", Capture: other}); err != nil {
		t.Fatal(err)
	}
	// Nor does a restore under other rules ask for the refresh, which
	// records stat-cache entries under the Engine's: it would read every
	// file the restore wrote, under the write lock, and find another tree.
	f.e.refresh.mu.Lock()
	due := f.e.refresh.mu.due
	f.e.refresh.mu.Unlock()
	if !due.IsZero() {
		t.Fatalf("a restore under other rules scheduled the refresh (due %v)", due)
	}
	now := map[string]string{"a.txt": "a2", "b.tmp": "b1", "dir/c.txt": "c1", "dir/d.tmp": "d2", "out/e.txt": "e1"}
	mixed, err := f.e.Save(ctx, SaveOptions{Task: "other", Message: "the engine's rules in the other task"})
	if err != nil {
		t.Fatal(err)
	}
	ownNow := f.save("own after the other restores")
	checkContents(t, f.e, []record{{id: mixed.ID, task: "other", files: now}, {id: ownNow.ID, task: DefaultTask, files: now}})

	if _, err := f.e.Save(ctx, SaveOptions{Capture: &Capture{Profile: "nosuch"}}); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("save with an unknown profile: %v, want ErrBadRequest", err)
	}
}

// interruptible is a fixture of files a.txt (a1) and b.tmp (b1) whose
// interrupt restores ref with opts and cancels it once its journal is
// written: the restore is left pending.
func interruptible(t *testing.T) (f *fixture, interrupt func(ref string, opts RestoreOptions)) {
	t.Helper()
	var cancel func()
	opts := Options{}
	opts.hooks.pause = func(_ context.Context, point string) {
		if point == pauseRestoreJournaled && cancel != nil {
			cancel()
		}
	}
	f = newFixtureOpts(t, testtree.Dir{"a.txt": testtree.File{Content: "a1"}, "b.tmp": testtree.File{Content: "b1"}}, opts)
	return f, func(ref string, ropts RestoreOptions) {
		t.Helper()
		ctx, c := context.WithCancel(context.Background())
		cancel = c
		defer func() { cancel = nil }()
		if _, err := f.e.Restore(ctx, ref, ropts); !errors.Is(err, context.Canceled) || f.e.PendingRestore() == nil {
			t.Fatalf("interrupted restore of %s: %v; want it cancelled and pending", ref, err)
		}
	}
}

// A restore under another Capture that is interrupted is completed under
// it, by whichever Engine settles it (here one opened again with its own
// rules): its journal records the Capture, and a completion under the
// Engine's rules would remove what the restore never meant to touch (the
// files only those rules capture, whose content the Engine's head holds).
func TestAnInterruptedRestoreUnderAnotherCaptureCompletesUnderIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f, interrupt := interruptible(t)
	other := &Capture{Exclude: []string{"*.tmp"}}
	o1, err := f.e.Save(ctx, SaveOptions{Task: "other", Capture: other})
	if err != nil {
		t.Fatal(err)
	}
	f.write("a.txt", "a2")
	f.write("b.tmp", "b2")
	f.save("own")
	interrupt(o1.ID.String(), RestoreOptions{Task: "other", Capture: other})
	f.open(Options{})
	j := f.e.PendingRestore()
	if j == nil || j.Capture == nil || !slices.Equal(j.Capture.Exclude, other.Exclude) {
		t.Fatalf("pending restore %+v: want its journal to record the other capture", j)
	}
	// Capture options that mean nothing are refused before anything is
	// settled.
	if _, err := f.e.Save(ctx, SaveOptions{Capture: &Capture{Profile: "nosuch"}}); !errors.Is(err, ErrBadRequest) || f.e.PendingRestore() == nil {
		t.Fatalf("save with an unknown profile: %v, pending %v; want ErrBadRequest and the restore still pending", err, f.e.PendingRestore())
	}
	res := f.save("settles it")
	if res.Settled == nil || res.Settled.Completed == nil {
		t.Fatalf("save settled %+v, want the restore completed", res.Settled)
	}
	if a, b := f.readFile("a.txt"), f.readFile("b.tmp"); a != "a1" || b != "b2" {
		t.Fatalf("after the completion: a.txt %q, b.tmp %q; want a1 restored and b.tmp left as it was (b2)", a, b)
	}
}

// The journal of a restore under the Engine's own rules records them, so
// that an Engine opened with other rules completes it as it was begun: a
// file only the first rules capture is restored all the same.
func TestAnInterruptedRestoreCompletesUnderTheRulesItBeganWith(t *testing.T) {
	t.Parallel()
	f, interrupt := interruptible(t)
	one := f.save("one")
	f.write("a.txt", "a2")
	f.write("b.tmp", "b2")
	f.save("two")
	interrupt(one.ID.String(), RestoreOptions{})
	f.open(Options{Exclude: []string{"*.tmp"}})
	if res := f.save("settles it"); res.Settled == nil || res.Settled.Completed == nil {
		t.Fatalf("save settled %+v, want the restore completed", res.Settled)
	}
	if a, b := f.readFile("a.txt"), f.readFile("b.tmp"); a != "a1" || b != "b1" {
		t.Fatalf("after the completion: a.txt %q, b.tmp %q; want both restored (a1, b1)", a, b)
	}
}

// A restore of the pending restore's target under other rules than its
// journal's is not that restore's own: the pending one is settled first
// (completed under its rules), then the new one runs.
func TestARestoreUnderOtherRulesSettlesThePendingOneFirst(t *testing.T) {
	t.Parallel()
	f, interrupt := interruptible(t)
	one := f.save("one")
	f.write("a.txt", "a2")
	f.save("two")
	interrupt(one.ID.String(), RestoreOptions{Capture: &Capture{Exclude: []string{"*.tmp"}}})
	res, err := f.e.Restore(context.Background(), one.ID.String(), RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Settled == nil || res.Settled.Completed == nil {
		t.Fatalf("restore under the Engine's rules settled %+v; want the pending restore (other rules) completed first, not resumed", res.Settled)
	}
}

// A restore under another capture that is abandoned (its content is
// damaged) sweeps the temporaries an interrupted run may have left where
// only its rules reach: a directory the Engine's rules exclude.
func TestAnAbandonedRestoreUnderAnotherCaptureSweepsWhereItsRulesReach(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	leftover := ""
	opts := Options{Exclude: []string{"gen/"}}
	opts.hooks.pause = func(_ context.Context, point string) {
		if point == pauseRestoreJournaled && leftover != "" { // what a run cut off there would have left
			if err := os.WriteFile(leftover, []byte("half"), 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	f := newFixtureOpts(t, testtree.Dir{"gen": testtree.Dir{
		"a": testtree.File{Content: strings.Repeat("a one ", 80)}, "b": testtree.File{Content: strings.Repeat("b one ", 80)},
	}}, opts)
	all := &Capture{} // the default profile, no extra patterns: gen/ included
	if _, err := f.e.Save(ctx, SaveOptions{Task: "other", Capture: all}); err != nil {
		t.Fatal(err)
	}
	f.write("gen/a", strings.Repeat("a two ", 80))
	f.write("gen/b", strings.Repeat("b two ", 80))
	ents, err := f.e.Ls(ctx, "other", "@1", "gen/b")
	if err != nil {
		t.Fatal(err)
	}
	editPackInPlace(t, f, ents[0].ID, func(b []byte, loc objects.Locator) { b[loc.Offset+int64(loc.Length)-3] ^= 0x40 })
	f.open(opts) // the damage read from disk, the Engine's rules kept
	leftover = filepath.Join(f.ws, "gen", restore.TempPrefix+"1-1")
	_, err = f.e.Restore(ctx, "@1", RestoreOptions{Task: "other", Capture: all})
	if abandoned := (*abandonedRestoreError)(nil); !errors.As(err, &abandoned) {
		t.Fatalf("restore of a damaged blob: %v, want it abandoned", err)
	}
	if _, err := os.Lstat(leftover); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the abandoned restore left %s (%v): its sweep did not read the workspace under its rules", leftover, err)
	}
}
