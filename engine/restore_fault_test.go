package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ckpt/ckpt/engine/internal/restore"
	"github.com/ckpt/ckpt/internal/faultfs"
	"github.com/ckpt/ckpt/internal/testbound"
	"github.com/ckpt/ckpt/internal/testtree"
)

// faultTimeout bounds one restore under injection: it must fail or finish,
// never hang.
const faultTimeout = testbound.Hang

// faultCase is a workspace with two checkpoints whose restore from the
// second to the first exercises every kind of restore step.
type faultCase struct {
	f        *fixture
	one, two ID
	// syncAllCheap makes the restores end with one syncfs instead of a
	// sync per file and directory (faultPlan.syncAllCheap).
	syncAllCheap bool
	// trees are the workspace as each checkpoint holds it.
	trees map[ID]map[string]testtree.Entry
}

func newFaultCase(t *testing.T) *faultCase {
	tree := richTree(t)
	tree["tree"] = testtree.Dir{"a": testtree.File{Content: "a1"}, "b": testtree.Dir{"c": testtree.File{Content: "c1"}}}
	f := newFixture(t, tree)
	c := &faultCase{f: f, trees: map[ID]map[string]testtree.Entry{}}
	c.one = f.save("one").ID
	c.trees[c.one] = f.read()
	mutateEverything(t, f.ws)
	c.two = f.save("two").ID
	c.trees[c.two] = f.read()
	return c
}

// restoreBounded runs a restore and fails the test if it does not return in time.
func restoreBounded(t *testing.T, e *Engine, ref string) (*RestoreResult, error) {
	t.Helper()
	type outcome struct {
		res *RestoreResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := e.Restore(context.Background(), ref, RestoreOptions{})
		e.syncing.Wait() // its journal's clearing, synced once it answered
		done <- outcome{res, err}
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-time.After(faultTimeout):
		t.Fatalf("restore %s hung under an injected fault", ref)
		return nil, nil
	}
}

// TestRestoreFaultInjection fails the i-th change restore makes through its
// seam (file creations, writes, chmods, syncs, renames, removals, mkdirs,
// symlinks, the journal's own writes), until a run meets no fault, with
// each of ENOSPC, EIO and EACCES, syncing each file and, where syncfs is
// sound, the file system (as when the system holds little unwritten data): with the long tests for i = 0, 1, 2, …,
// otherwise at every restoreFaultStride-th i, each errno from its own
// start so that the three between them fail a spread of points. Every run must
// return within faultTimeout and leave the workspace fully restored,
// restored but for reported conflicts (a permission fault concerns one
// path), untouched (the fault came before the journal), or resumable: the
// journal present and the next writing Open completing it. Only the sync
// that makes the journal's clearing durable may fail after the workspace is
// complete, once the restore answered: it is left to write and sync again. The store must
// verify and every checkpoint restore byte-exact afterwards.
// restoreFaultStride spaces the points TestRestoreFaultInjection fails
// without the long tests: each run restores, checks and verifies a whole
// workspace and store, seconds under -race on a loaded machine.
const restoreFaultStride = 8

func TestRestoreFaultInjection(t *testing.T) {
	t.Parallel()
	errnos := []syscall.Errno{syscall.ENOSPC, syscall.EIO, syscall.EACCES}
	step := testbound.Scale(restoreFaultStride, 1)
	syncModes := []bool{false}
	if syncfsSound(t, t.TempDir()) {
		syncModes = append(syncModes, true)
	}
	for _, syncAll := range syncModes {
		for j, errno := range errnos {
			t.Run(fmt.Sprintf("%v/syncfs=%v", errno, syncAll), func(t *testing.T) {
				t.Parallel()
				c := newFaultCase(t)
				c.syncAllCheap = syncAll
				if j > 0 {
					// The first errno's first run fails the journal file's
					// creation; the others' write over the file.
					c.f.leaveJournalFile()
				}
				for i := j * step / len(errnos); ; i += step {
					if done := c.run(i, errno); done {
						t.Logf("%v: no injection point at %d, every %d-th failed before it", errno, i, step)
						if i < 40 {
							t.Fatalf("only %d injection points: the seam misses restore's writes", i)
						}
						return
					}
				}
			})
		}
	}
}

// run restores from the second checkpoint to the first with operation i
// failing, checks the outcome and returns to the second checkpoint. It
// reports whether the run met no fault (i is past the last operation).
func (c *faultCase) run(i int, errno syscall.Errno) (done bool) {
	t, f := c.f.t, c.f
	var fails func(int, faultfs.Op) bool
	if errno == syscall.ENOSPC {
		fails = fullFrom(i)
	}
	plan := newFaultPlan(i, errno, fails)
	plan.syncAllCheap = c.syncAllCheap
	f.open(plan.options(f.store))
	res, err := restoreBounded(t, f.e, "@1")
	failed := plan.Hit()
	where := fmt.Sprintf("fault %d (%s, %v)", i, failed, errno)
	switch {
	case failed == "":
		if err != nil || len(res.Conflicts) != 0 {
			t.Fatalf("%s: no fault injected, yet err %v, conflicts %v", where, err, res.Conflicts)
		}
		assertSameTree(t, c.trees[c.one], f.read())
		return true
	case err == nil && filepath.Base(failed) == journalName: // after the answer
		c.checkClearingUnsynced(where)
	case err == nil:
		c.checkConflicts(where, res, errno)
	default:
		c.checkInterrupted(where, err, errno)
	}
	c.checkStore(where)
	return false
}

// checkClearingUnsynced: only the journal's clearing failed, written again
// and synced after the restore answered; the workspace is complete and the head
// moved, nothing is pending, and the clearing waits to be synced again
// (by the next write operation's end, or Close).
func (c *faultCase) checkClearingUnsynced(where string) {
	t, f := c.f.t, c.f
	t.Helper()
	if !f.e.clearUnsynced.Load() || f.e.PendingRestore() != nil || pendingOnDisk(t, f.store) || c.head() != c.one {
		t.Fatalf("%s: clearing unsynced %v, journal %v, head %s; want the restore complete and its clearing left to sync",
			where, f.e.clearUnsynced.Load(), f.e.PendingRestore(), c.head().Short())
	}
	assertSameTree(t, c.trees[c.one], f.read())
}

// checkConflicts: a permission fault is a conflict on its path; the rest
// is restored, the head moved, and a plain restore then finishes the job.
func (c *faultCase) checkConflicts(where string, res *RestoreResult, errno syscall.Errno) {
	t, f := c.f.t, c.f
	t.Helper()
	named := false
	for _, c := range res.Conflicts {
		named = named || strings.Contains(c.Reason, errno.Error())
	}
	if errno != syscall.EACCES || !named {
		t.Fatalf("%s: restore succeeded with conflicts %v", where, res.Conflicts)
	}
	if f.e.PendingRestore() != nil || c.head() != c.one {
		t.Fatalf("%s: finished with conflicts but journal %v, head %s", where, f.e.PendingRestore(), c.head().Short())
	}
	f.open(Options{})
	if res := f.restore("@1", RestoreOptions{}); len(res.Conflicts) != 0 {
		t.Fatalf("%s: second restore conflicts %v", where, res.Conflicts)
	}
	assertSameTree(t, c.trees[c.one], f.read())
}

// checkInterrupted: any other fault stops the restore with an error that
// names it; either nothing changed, or the journal is there and the next
// writing Open completes the restore.
func (c *faultCase) checkInterrupted(where string, err error, errno syscall.Errno) {
	t, f := c.f.t, c.f
	t.Helper()
	if !errors.Is(err, errno) {
		t.Fatalf("%s: error %v does not wrap the injected one", where, err)
	}
	if !pendingOnDisk(t, f.store) {
		// Untouched (the journal never made it), or complete (only the
		// sync of its clearing failed): the head says which.
		head := c.head()
		if head != c.one && head != c.two {
			t.Fatalf("%s: no journal, head %s", where, head.Short())
		}
		assertSameTree(t, c.trees[head], f.read())
		return
	}
	if f.e.PendingRestore() == nil {
		t.Fatalf("%s: journal on disk but not reported pending", where)
	}
	f.open(Options{})
	done, err := f.e.SettleRestore(context.Background())
	if err != nil || done == nil || done.Completed == nil || len(done.Completed.Conflicts) != 0 {
		t.Fatalf("%s: settling did not complete the restore: %+v, %v", where, done, err)
	}
	if pendingOnDisk(t, f.store) || c.head() != c.one {
		t.Fatalf("%s: after completion a journal pending, or head %s", where, c.head().Short())
	}
	assertSameTree(t, c.trees[c.one], f.read())
}

// checkStore verifies the store and restores every checkpoint byte-exact,
// the second last, where the next run starts.
func (c *faultCase) checkStore(where string) {
	t, f := c.f.t, c.f
	t.Helper()
	f.open(Options{})
	rep, err := f.e.Verify(context.Background(), VerifyOptions{})
	if err != nil || !rep.OK() {
		t.Fatalf("%s: verify: %v %+v", where, err, rep)
	}
	for _, id := range []ID{c.one, c.two} {
		if res := f.restore(id.String(), RestoreOptions{NoBackup: true}); len(res.Conflicts) != 0 {
			t.Fatalf("%s: restore %s: conflicts %v", where, id.Short(), res.Conflicts)
		}
		assertSameTree(t, c.trees[id], f.read())
	}
}

func (c *faultCase) head() ID { return c.f.list().Head }

// A restore whose first syncfs fails (the file system could not write the
// new contents out) renames nothing into place: every changed file keeps
// its old content, no temporary file is left, the restore stays pending,
// with an error that says so, and settling it completes it. Where syncfs is
// not sound (or none) the restore syncs each file and never asks.
func TestRestoreWhoseSyncfsFailsStaysPending(t *testing.T) {
	t.Parallel()
	c := newFaultCase(t)
	plan := newFaultPlan(-1, syscall.EIO, func(_ int, op faultfs.Op) bool { return op.Kind == faultfs.OpSyncFS })
	plan.syncAllCheap = true
	c.f.open(plan.options(c.f.store))
	res, err := restoreBounded(t, c.f.e, "@1")
	if !syncfsSound(t, c.f.ws) {
		if err != nil || plan.Hit() != "" || len(res.Conflicts) != 0 {
			t.Fatalf("no sound syncfs here, yet err %v, fault %q, conflicts %v", err, plan.Hit(), res.Conflicts)
		}
		assertSameTree(t, c.trees[c.one], c.f.read())
		return
	}
	if plan.Hit() == "" {
		t.Fatalf("the restore asked for no syncfs (err %v)", err)
	}
	now, before, target := c.f.read(), c.trees[c.two], c.trees[c.one]
	kept := 0 // files whose content the restore changes, still as they were
	for p, e := range now {
		if e.Kind == "file" && e == before[p] && target[p].Kind == "file" && target[p].Content != e.Content {
			kept++
		}
		if strings.Contains(p, restore.TempPrefix) {
			t.Errorf("temporary file %s left", p)
		}
		if e.Kind == "file" && target[p] != e && before[p] != e {
			t.Errorf("%s holds %v, neither its old content nor its new", p, e)
		}
		if e.Kind == "file" && target[p] == e && before[p].Kind == "file" && before[p].Content != e.Content {
			t.Errorf("%s renamed into place before its content was durable", p)
		}
	}
	if kept == 0 {
		t.Error("no file whose content the restore changes kept its old content")
	}
	c.checkInterrupted("failed syncfs", err, syscall.EIO)
	c.checkStore("failed syncfs")
}

// A restore a crash cut off leaves the fresh subtrees it was filling under
// their temporary names (a failure removes them; a crash cannot): its
// completion removes them, whatever they hold, as it removes the
// temporary files left.
func TestCompletingARestoreRemovesTheSubtreesACrashLeft(t *testing.T) {
	t.Parallel()
	c := newFaultCase(t)
	inWorkspace := func(_ int, op faultfs.Op) bool { return op.Kind == faultfs.OpCreate && !filepath.IsAbs(op.Path) }
	plan := newFaultPlan(-1, syscall.EIO, inWorkspace)
	c.f.open(plan.options(c.f.store))
	if _, err := restoreBounded(t, c.f.e, "@1"); !errors.Is(err, syscall.EIO) || c.f.e.PendingRestore() == nil {
		t.Fatalf("restore with its first file's creation failing: %v, pending %v", err, c.f.e.PendingRestore())
	}
	// What a crashed process (pid 1) left: a subtree at the top, one inside
	// a directory the checkpoint holds, a temporary file.
	for rel, content := range map[string]string{
		restore.TempPrefix + "1-7/deep/x.txt":    "half",
		restore.TempPrefix + "1-7/y":             "",
		"src/" + restore.TempPrefix + "1-8/z.go": "package z",
		restore.TempPrefix + "1-9":               "half a file",
	} {
		name := filepath.Join(c.f.ws, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c.f.open(Options{})
	done, err := c.f.e.SettleRestore(context.Background())
	if err != nil || done == nil || done.Completed == nil || len(done.Completed.Conflicts) != 0 {
		t.Fatalf("settling the restore: %+v, %v; want it completed without conflicts", done, err)
	}
	assertSameTree(t, c.trees[c.one], c.f.read())
}

// A restore that stages its files (one syncfs for all) makes each fresh
// directory under a temporary name and renames it into place; a directory
// that stands there uncaptured (ignored now) is merged into instead, as a
// restore that syncs each file merges into it.
func TestAStagedRestoreMergesIntoAnUncapturedDirectory(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{
		".gitignore": testtree.File{Content: "*.o\n"},
		"gen":        testtree.Dir{"a.txt": testtree.File{Content: "a\n"}, "sub": testtree.Dir{"b.txt": testtree.File{Content: "b\n"}}},
		"new":        testtree.Dir{"fresh.txt": testtree.File{Content: "fresh\n"}},
	})
	want := f.read()
	two := f.save("two").ID
	for _, name := range []string{"gen/a.txt", "gen/sub", "new"} {
		if err := os.RemoveAll(filepath.Join(f.ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(f.ws, ".gitignore"), []byte("*.o\ngen/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.ws, "gen", "build.o"), []byte("ignored"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.save("gen ignored")
	want["gen/build.o"] = f.read()["gen/build.o"] // as the platform holds it
	plan := newFaultPlan(-1, 0, nil)
	plan.syncAllCheap = true
	f.open(plan.options(f.store))
	res, err := restoreBounded(t, f.e, two.String())
	if err != nil {
		t.Fatalf("restore of gen/ where it stands ignored: %v", err)
	}
	if len(res.Conflicts) != 0 {
		t.Fatalf("restore of gen/ where it stands ignored: conflicts %v", res.Conflicts)
	}
	assertSameTree(t, want, f.read())
}
