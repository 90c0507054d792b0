package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ckpt/ckpt/engine/internal/restore"
	"github.com/ckpt/ckpt/internal/faultfs"
	"github.com/ckpt/ckpt/internal/testtree"
)

// atV1 fails the test unless every file of cancelledRestoreFixture's
// workspace holds its content at @1.
func atV1(t *testing.T, f *fixture) {
	t.Helper()
	var stale []string
	for p, e := range f.read() {
		if !strings.HasPrefix(e.Content, "v1 ") {
			stale = append(stale, p)
		}
	}
	if len(stale) != 0 {
		slices.Sort(stale)
		t.Fatalf("%d files not at @1: %v", len(stale), stale)
	}
}

// A whole-workspace restore left pending is not resumed by a Restore of
// the same target limited to some paths: that run would write those
// paths only while the journal, recording no paths, moves the head to
// the target and is removed, the rest of the workspace never restored.
// The pending restore is completed whole first, then the limited one runs.
func TestRestoreOfSomePathsCompletesThePendingWholeRestoreFirst(t *testing.T) {
	t.Parallel()
	f, one, _ := cancelledRestoreFixture(t, Options{})
	res := f.restore("@1", RestoreOptions{Paths: []string{"f00"}})
	if j := f.e.PendingRestore(); j != nil {
		t.Fatalf("journal %+v still pending", j)
	}
	if head := f.list().Head; head != one.ID {
		t.Fatalf("head %s, want @1 %s", head.Short(), one.ID.Short())
	}
	atV1(t, f)
	if s := res.Settled; s == nil || s.Completed == nil || s.Journal == nil || len(s.Journal.Paths) != 0 {
		t.Fatalf("settled %+v, want the pending whole restore completed first", s)
	}
}

// A restore limited to some paths left pending is not resumed by a whole
// Restore of the same target: that run would write every file while the
// journal, recording paths, keeps the head where it was. The pending
// restore is completed as recorded first, then the whole one runs and
// moves the head. A Restore of the same paths, in another order, resumes
// it (nothing settled first, the journal's backup kept).
func TestWholeRestoreCompletesThePendingRestoreOfSomePathsFirst(t *testing.T) {
	t.Parallel()
	var half []string
	for i := 0; i < 30; i++ {
		half = append(half, fmt.Sprintf("f%02d", i))
	}
	f, one, _ := cancelledRestoreOf(t, Options{}, RestoreOptions{Paths: half})
	if j := f.e.PendingRestore(); len(j.Paths) != len(half) {
		t.Fatalf("pending %+v, want the journal to record %d paths", j, len(half))
	}
	res := f.restore("@1", RestoreOptions{})
	if j := f.e.PendingRestore(); j != nil {
		t.Fatalf("journal %+v still pending", j)
	}
	if head := f.list().Head; head != one.ID {
		t.Fatalf("head %s, want @1 %s", head.Short(), one.ID.Short())
	}
	atV1(t, f)
	if s := res.Settled; s == nil || s.Completed == nil || s.Journal == nil || len(s.Journal.Paths) != len(half) {
		t.Fatalf("settled %+v, want the pending restore of %d paths completed first", s, len(half))
	}

	g, _, _ := cancelledRestoreOf(t, Options{}, RestoreOptions{Paths: half})
	j := g.e.PendingRestore()
	reversed := slices.Clone(half)
	slices.Reverse(reversed)
	res = g.restore("@1", RestoreOptions{Paths: reversed})
	if res.Settled != nil || res.Backup != j.Backup {
		t.Fatalf("restore of the same paths: settled %+v, backup %s; want a resume with the journal's backup %s",
			res.Settled, res.Backup.Short(), j.Backup.Short())
	}
	for _, p := range half {
		if got := g.readFile(p); !strings.HasPrefix(got, "v1 ") {
			t.Fatalf("%s = %q after the resume, want @1's", p, got)
		}
	}
}

// A restore limited to some paths that removed one only the workspace
// held (not in the target) and then stopped leaves that path in neither
// tree. Completing it, by the next write or by a Restore of the same
// paths, does not check the paths again: it finishes the restore instead
// of failing as a bad request, which would keep the journal and so fail
// every later write.
func TestCompletingARestoreOfPathsItRemoved(t *testing.T) {
	t.Parallel()
	for _, by := range []string{"settle", "restore"} {
		t.Run(by, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, testtree.Dir{"a": testtree.File{Content: "a1"}})
			f.save("one")
			f.write("a", "a2")
			f.write("n", "new")
			two := f.save("two")
			// Removals come first: n is gone when a's creation fails.
			creates := func(_ int, op faultfs.Op) bool { return op.Kind == faultfs.OpCreate && !filepath.IsAbs(op.Path) }
			f.open(newFaultPlan(-1, syscall.EIO, creates).options(f.store))
			paths := []string{"n", "a"}
			if _, err := f.e.Restore(context.Background(), "@1", RestoreOptions{Paths: paths}); !errors.Is(err, syscall.EIO) || f.e.PendingRestore() == nil {
				t.Fatalf("restore: %v, pending %+v; want it cut off by EIO", err, f.e.PendingRestore())
			}
			if _, err := os.Lstat(filepath.Join(f.ws, "n")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("n not removed before the failure: %v", err)
			}
			f.open(Options{})
			switch by {
			case "settle":
				done, err := f.e.SettleRestore(context.Background())
				if err != nil || done == nil || done.Completed == nil {
					t.Fatalf("settle: %+v, %v; want the restore completed", done, err)
				}
			case "restore":
				res, err := f.e.Restore(context.Background(), "@1", RestoreOptions{Paths: paths})
				if err != nil || res.Settled != nil {
					t.Fatalf("restore of the same paths: %+v, %v; want it to resume the pending one", res, err)
				}
			}
			if j := f.e.PendingRestore(); j != nil {
				t.Fatalf("journal %+v still pending", j)
			}
			if got := f.readFile("a"); got != "a1" {
				t.Fatalf("a = %q, want @1's", got)
			}
			if _, err := os.Lstat(filepath.Join(f.ws, "n")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("n came back: %v", err)
			}
			if head := f.list().Head; head != two.ID {
				t.Fatalf("head %s, want %s kept by a restore of some paths", head.Short(), two.ID.Short())
			}
			if _, err := f.e.Save(context.Background(), SaveOptions{Message: "after"}); err != nil {
				t.Fatalf("save after the completion: %v", err)
			}
		})
	}
}

// cutOffRestore saves @1 and @2 of a small workspace and restores @1
// limited to paths (all of it when none) with the workspace's first file
// creation failing: the restore is left pending, before any file of it
// was written.
func cutOffRestore(t *testing.T, paths []string) *fixture {
	t.Helper()
	f := newFixture(t, testtree.Dir{
		"d": testtree.Dir{"a": testtree.File{Content: "a1"}},
		"e": testtree.Dir{"c": testtree.File{Content: "c1"}},
		"b": testtree.File{Content: "b1"},
	})
	f.save("one")
	f.write("d/a", "a2")
	f.write("b", "b2")
	f.save("two")
	creates := func(_ int, op faultfs.Op) bool { return op.Kind == faultfs.OpCreate && !filepath.IsAbs(op.Path) }
	f.open(newFaultPlan(-1, syscall.EIO, creates).options(f.store))
	if _, err := f.e.Restore(context.Background(), "@1", RestoreOptions{Paths: paths}); !errors.Is(err, syscall.EIO) || f.e.PendingRestore() == nil {
		t.Fatalf("restore: %v, pending %+v; want it cut off by EIO", err, f.e.PendingRestore())
	}
	f.e.Close()
	f.e = nil
	return f
}

// tempsLeft are the temporaries a crash of a restore of d/a may leave
// (a file beside d/a, a fresh subtree made at the top), a temporary in a
// directory such a restore never writes in, a user's file whose name
// merely starts like a temporary's, and the user's paths of userTemps.
var tempsLeft = map[string]string{
	"d/" + restore.TempPrefix + "1-9":             "half",
	restore.TempPrefix + "1-8/deep/x":             "half",
	"e/" + restore.TempPrefix + "1-7":             "half",
	"d/" + restore.TempPrefix + "notes.txt":       "the user's",
	restore.TempPrefix + "1-8-not-a-temp/x.txt":   "the user's",
	restore.TempPrefix + "2024-06":                "the user's",
	"e/" + restore.TempPrefix + "2023-11/new.txt": "the user's",
}

// userTemps are a user's file and directory named exactly as a
// restore's temporaries are, but last changed before the restore began:
// leaveTemps dates them an hour back (the directory only, not the file
// in it, which is as new as the restore's temporaries).
var userTemps = []string{restore.TempPrefix + "2024-06", "e/" + restore.TempPrefix + "2023-11"}

// leaveTemps writes tempsLeft into f's workspace.
func leaveTemps(t *testing.T, f *fixture) {
	t.Helper()
	for rel, content := range tempsLeft {
		f.write(rel, content)
	}
	before := time.Now().Add(-time.Hour)
	for _, rel := range userTemps {
		if err := os.Chtimes(filepath.Join(f.ws, filepath.FromSlash(rel)), before, before); err != nil {
			t.Fatal(err)
		}
	}
}

// checkTemps fails the test unless the temporaries in gone were removed
// and every other path of tempsLeft is still there.
func checkTemps(t *testing.T, f *fixture, gone ...string) {
	t.Helper()
	for rel := range tempsLeft {
		_, err := os.Lstat(filepath.Join(f.ws, filepath.FromSlash(rel)))
		switch {
		case slices.Contains(gone, rel) && err == nil:
			t.Errorf("temporary %s left", rel)
		case !slices.Contains(gone, rel) && err != nil:
			t.Errorf("%s removed: %v", rel, err)
		}
	}
}

// Completing a restore limited to some paths removes the temporaries
// its interrupted run may have left in the directories it writes in,
// above those paths, which the paths do not cover: else the next save
// captures them. Other directories, names only like a temporary's, and a
// user's file or directory named as a temporary but older than the
// restore, are left alone.
func TestCompletingARestoreOfSomePathsRemovesItsTemporaries(t *testing.T) {
	t.Parallel()
	f := cutOffRestore(t, []string{"d/a"})
	leaveTemps(t, f)
	f.open(Options{})
	done, err := f.e.SettleRestore(context.Background())
	if err != nil || done == nil || done.Completed == nil {
		t.Fatalf("settle: %+v, %v; want the restore completed", done, err)
	}
	if got := f.readFile("d/a"); got != "a1" {
		t.Fatalf("d/a = %q, want @1's", got)
	}
	checkTemps(t, f, "d/"+restore.TempPrefix+"1-9", restore.TempPrefix+"1-8/deep/x")
}

// outdatedRestore is cutOffRestore(t, paths) whose task's head then
// moved on (b saved as "newer work") while its journal was out of sight:
// the next settling discards the journal. The engine is closed.
func outdatedRestore(t *testing.T, paths []string) *fixture {
	t.Helper()
	f := cutOffRestore(t, paths)
	stale, err := os.ReadFile(filepath.Join(f.store, journalName))
	if err != nil {
		t.Fatal(err)
	}
	// An engine that never saw the journal moves the head on.
	if err := os.Remove(filepath.Join(f.store, journalName)); err != nil {
		t.Fatal(err)
	}
	f.open(Options{})
	f.write("b", "newer work")
	f.save("newer work")
	f.e.Close()
	if err := os.WriteFile(filepath.Join(f.store, journalName), stale, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// A journal discarded without replaying it (the task's head moved on)
// takes the temporaries its restore may have left with it: in the
// directories a restore of its paths writes in, or anywhere for a
// restore of the whole workspace. The rest of the workspace stays as it
// is, a user's file named as a temporary but older than the restore among
// it.
func TestDiscardingAJournalRemovesItsTemporaries(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		paths []string
		gone  []string
	}{
		{[]string{"d/a"}, []string{"d/" + restore.TempPrefix + "1-9", restore.TempPrefix + "1-8/deep/x"}},
		{nil, []string{"d/" + restore.TempPrefix + "1-9", restore.TempPrefix + "1-8/deep/x", "e/" + restore.TempPrefix + "1-7"}},
	} {
		t.Run(fmt.Sprintf("paths=%q", c.paths), func(t *testing.T) {
			t.Parallel()
			f := outdatedRestore(t, c.paths)
			leaveTemps(t, f)
			f.open(Options{})
			done, err := f.e.SettleRestore(context.Background())
			if err != nil || done == nil || done.Discarded == "" {
				t.Fatalf("settle: %+v, %v; want the journal discarded", done, err)
			}
			if got := f.readFile("b"); got != "newer work" {
				t.Fatalf("b = %q, want the newer work kept", got)
			}
			checkTemps(t, f, c.gone...)
		})
	}
}

// A Force restore cut off before it wrote anything is completed with
// Force, as the journal records it: the file standing where the target
// puts its own is overwritten, not left as a conflict.
func TestCompletingAForceRestoreForces(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"x": testtree.File{Content: "x1"}})
	f.save("one")
	if err := os.Remove(filepath.Join(f.ws, "x")); err != nil {
		t.Fatal(err)
	}
	f.write(".gitignore", "x\n")
	f.write("z", "z2")
	f.save("two")
	f.write("x", "mine, ignored") // uncaptured: only Force replaces it
	// Removals come first: z's fails before anything is written.
	removes := func(_ int, op faultfs.Op) bool { return op.Kind == faultfs.OpRemove && op.Path == "z" }
	f.open(newFaultPlan(-1, syscall.EIO, removes).options(f.store))
	if _, err := f.e.Restore(context.Background(), "@1", RestoreOptions{Force: true}); !errors.Is(err, syscall.EIO) {
		t.Fatalf("restore: %v; want it cut off by EIO", err)
	}
	j := f.e.PendingRestore()
	if j == nil || !j.Force {
		t.Fatalf("pending %+v, want a journal recording Force", j)
	}
	f.open(Options{})
	done, err := f.e.SettleRestore(context.Background())
	if err != nil || done == nil || done.Completed == nil || done.Completed.Backup != j.Backup {
		t.Fatalf("settle: %+v, %v; want the restore completed from its journal (backup %s)", done, err, j.Backup.Short())
	}
	if c := done.Completed.Conflicts; len(c) != 0 {
		t.Fatalf("completion left conflicts %+v; the restore was forced", c)
	}
	if got := f.readFile("x"); got != "x1" {
		t.Fatalf("x = %q, want @1's", got)
	}
}

// A Restore that resumes the pending restore reports it as the
// completion by a later write does: its EventRestore has Resumed set. One
// that settles the pending restore first does not (the settled one's
// event has).
func TestRestoreThatResumesSaysSo(t *testing.T) {
	t.Parallel()
	var events []Event
	f, one, _ := cancelledRestoreFixture(t, Options{OnEvent: func(ev Event) { events = append(events, ev) }})
	events = nil
	f.restore("@1", RestoreOptions{})
	if len(events) != 1 || events[0].Type != EventRestore || events[0].Commit != one.ID || !events[0].Resumed {
		t.Fatalf("events %+v, want one restore of @1 with Resumed set", events)
	}

	g, _, two := cancelledRestoreFixture(t, Options{OnEvent: func(ev Event) { events = append(events, ev) }})
	events = nil
	g.restore("@2", RestoreOptions{})
	var restores []Event
	for _, ev := range events {
		if ev.Type == EventRestore {
			restores = append(restores, ev)
		}
	}
	if len(restores) != 2 || !restores[0].Resumed || restores[1].Resumed || restores[1].Commit != two.ID {
		t.Fatalf("restore events %+v, want the settled one resumed, then the restore of @2 not", restores)
	}
}

// A Restore with another Force than the pending restore's is not its
// resumption: the pending one is completed as its journal says (settled),
// then the Restore runs as asked; the same Force resumes it.
func TestRestoreWithAnotherForceSettlesThePendingOneFirst(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name           string
		pending, again bool
	}{
		{"forced after a plain one", false, true},
		{"plain after a forced one", true, false},
		{"the same force", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f, one, _ := cancelledRestoreOf(t, Options{}, RestoreOptions{Force: c.pending})
			if j := f.e.pending; j == nil || j.Force != c.pending {
				t.Fatalf("pending journal %+v, want one with Force %v", j, c.pending)
			}
			res := f.restore("@1", RestoreOptions{Force: c.again})
			if settled := res.Settled != nil; settled != (c.pending != c.again) {
				t.Fatalf("Restore with Force %v over a pending one with Force %v settled it: %v", c.again, c.pending, settled)
			}
			if res.Restored != one.ID || f.e.pending != nil {
				t.Fatalf("restored %s, pending %+v; want @1 and none", res.Restored, f.e.pending)
			}
		})
	}
}

// The completion of a whole restore cut off by a crash reports the
// workspace's paths it changed: the temporaries the crash left, which it
// removes, are the restore's own, not the user's files deleted (a
// completion once listed each as one, "1500 written, 1401 deleted"). Its
// time is measured, whether a later write settles it or a Restore of the
// same target resumes it; a dry run of that Restore previews it alike.
func TestCompletedRestoreDoesNotReportItsTemporariesAsDeleted(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"settled", "resumed", "previewed"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			f := cutOffRestore(t, nil)
			leaveTemps(t, f)
			f.open(Options{})
			var res *RestoreResult
			if how == "settled" {
				done, err := f.e.SettleRestore(context.Background())
				if err != nil || done == nil || done.Completed == nil {
					t.Fatalf("settle: %+v, %v; want the restore completed", done, err)
				}
				res = done.Completed
			} else {
				res = f.restore("@1", RestoreOptions{DryRun: how == "previewed"})
				if res.Settled != nil || !res.resumed {
					t.Fatalf("restore settled %+v, resumed %v; want it to resume the pending one", res.Settled, res.resumed)
				}
			}
			if how == "previewed" {
				checkTemps(t, f)
			} else {
				checkTemps(t, f, "d/"+restore.TempPrefix+"1-9", restore.TempPrefix+"1-8/deep/x", "e/"+restore.TempPrefix+"1-7")
			}
			if len(res.Deleted) != 0 {
				t.Errorf("deleted %q; the completion removed only its own temporaries", res.Deleted)
			}
			if !slices.Equal(res.Written, []string{"b", "d/a"}) {
				t.Errorf("written %q, want b and d/a", res.Written)
			}
			if res.Duration <= 0 {
				t.Errorf("duration %v, want the completion's time", res.Duration)
			}
		})
	}
}
