package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/internal/faultfs"
	"github.com/ckpt/ckpt/internal/testtree"
	"github.com/ckpt/ckpt/objects"
)

// treeHistory saves a workspace of three nested directories of a dozen
// files each, then n edits of one file in the deepest and, every fifth,
// of one at the top, one checkpoint each. It returns the checkpoints and
// what the workspace held at each.
func treeHistory(t *testing.T, n int) (*fixture, []ID, []map[string]testtree.Entry) {
	dir := func(prefix string) testtree.Dir {
		d := testtree.Dir{}
		for i := range 12 {
			d[fmt.Sprintf("%s%02d.txt", prefix, i)] = testtree.File{Content: fmt.Sprintf("%s file %d\n", prefix, i)}
		}
		return d
	}
	top, mid, deep := dir("top"), dir("mid"), dir("deep")
	mid["deep"] = deep
	top["mid"] = mid
	f := newFixture(t, top)
	cps := []ID{f.save("v0").ID}
	states := []map[string]testtree.Entry{f.read()}
	for k := 1; k <= n; k++ {
		f.write("mid/deep/hot.txt", fmt.Sprintf("version %d\n", k))
		if k%5 == 0 {
			f.write("top00.txt", fmt.Sprintf("top version %d\n", k))
		}
		cps = append(cps, f.save(fmt.Sprintf("v%d", k)).ID)
		states = append(states, f.read())
	}
	return f, cps, states
}

// treeDeltas maps every tree stored as a delta to its base.
func treeDeltas(t *testing.T, db *index.DB) map[objects.ID]objects.ID {
	t.Helper()
	deltas := map[objects.ID]objects.ID{}
	err := db.EachTreeBase(func(id, base objects.ID) error {
		if !base.IsZero() {
			deltas[id] = base
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return deltas
}

// A save stores a changed directory's tree as a delta of its previous
// tree; after reopening, checkpoints at every depth of the chains restore
// byte for byte, and the store verifies.
func TestSaveStoresTreesAsDeltasAndColdRestoreReadsThem(t *testing.T) {
	f, cps, states := treeHistory(t, 40)
	deltas := treeDeltas(t, f.e.db)
	// Every save changes the root, mid and mid/deep: all but the first
	// version of each is a delta except where a chain of 16 ends.
	if want := 3 * (40 - 40/(index.MaxTreeDeltaDepth+1)); len(deltas) < want {
		t.Fatalf("%d trees stored as deltas, want at least %d", len(deltas), want)
	}
	f.open(Options{})
	for _, k := range []int{40, 16, 17, 1, 33, 0} {
		f.restore(cps[k].String(), RestoreOptions{NoBackup: true, Force: true})
		if got := f.read(); testtree.Diff(states[k], got) != "" {
			t.Fatalf("restore of v%d differs:\n%s", k, testtree.Diff(states[k], got))
		}
	}
	mustVerify(t, f.e)
}

// A collection that drops the checkpoints holding the bases of live delta
// trees stores those trees whole: every kept checkpoint restores, every
// stored delta's base is stored, and the store verifies and keeps saving
// deltas.
func TestGCStoresWholeTheTreesWhoseBaseItDrops(t *testing.T) {
	f, cps, states := treeHistory(t, 20)
	res, err := f.e.GC(context.Background(), GCOptions{Policy: &RetentionPolicy{KeepLast: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if res.CheckpointsDeleted != 20 {
		t.Fatalf("gc dropped %d checkpoints, want 20", res.CheckpointsDeleted)
	}
	f.open(Options{})
	for id, base := range treeDeltas(t, f.e.db) {
		if _, err := f.e.db.Tree(base); err != nil {
			t.Fatalf("tree %s is a delta of %s: %v", id.Short(), base.Short(), err)
		}
	}
	f.restore(cps[20].String(), RestoreOptions{NoBackup: true, Force: true})
	assertSameTree(t, states[20], f.read())
	mustVerify(t, f.e)
	f.write("mid/deep/hot.txt", "after gc\n")
	f.save("after gc")
	if len(treeDeltas(t, f.e.db)) == 0 {
		t.Fatal("the save after gc stored no tree as a delta")
	}
	mustVerify(t, f.e)
}

// A collection that drops the tree several live trees went on from (the
// tree at the middle of a full chain) stores one of them whole and the
// others as deltas of it, in the same batch, not all of them whole; every kept checkpoint
// restores and the store verifies.
func TestGCStoresTheTreesThatShareADroppedBaseAsAFamily(t *testing.T) {
	f, cps, states := treeHistory(t, 3*(index.MaxTreeDeltaDepth+1))
	before := treeDeltas(t, f.e.db)
	if _, err := f.e.GC(context.Background(), GCOptions{Policy: &RetentionPolicy{KeepLast: 2 * index.MaxTreeDeltaDepth}}); err != nil {
		t.Fatal(err)
	}
	f.open(Options{})
	stored := map[objects.ID]objects.ID{} // every stored tree, and its base (zero: whole)
	if err := f.e.db.EachTreeBase(func(id, base objects.ID) error { stored[id] = base; return nil }); err != nil {
		t.Fatal(err)
	}
	groups := map[objects.ID][]objects.ID{} // a dropped base, and the kept trees that were its deltas
	for id, base := range before {
		_, kept := stored[id]
		if _, dropped := stored[base]; kept && !dropped {
			groups[base] = append(groups[base], id)
		}
	}
	shared := 0
	for base, group := range groups {
		whole := 0
		for _, id := range group {
			if stored[id].IsZero() {
				whole++
			}
		}
		if whole != 1 {
			t.Fatalf("of the %d kept trees that were deltas of dropped tree %s, %d are stored whole, want 1", len(group), base.Short(), whole)
		}
		if len(group) > 1 {
			shared++
		}
	}
	if shared == 0 {
		t.Fatal("the fixture's collection dropped no tree that several kept trees were deltas of")
	}
	for k := len(cps) - 2*index.MaxTreeDeltaDepth; k < len(cps); k++ {
		f.restore(cps[k].String(), RestoreOptions{NoBackup: true, Force: true})
		assertSameTree(t, states[k], f.read())
	}
	mustVerify(t, f.e)
}

// A collection whose sweep, which stores the families of trees anew,
// cannot be written returns the error and leaves a store that verifies,
// every kept checkpoint restoring.
func TestGCFailingSweepLeavesTheTreesReadable(t *testing.T) {
	needAbandonedIndexFilesFreed(t)
	f, cps, states := treeHistory(t, 3*(index.MaxTreeDeltaDepth+1))
	var committing atomic.Bool
	h := newInjector()
	h.Errno = errnoEIO
	h.Fails = func(int, faultfs.Op) bool { return committing.Load() }
	f.open(Options{hooks: testHooks{storeFS: h.fs(), gcStep: func(op string) { committing.Store(committing.Load() || op == "commit") }}})
	_, err := f.e.GC(context.Background(), GCOptions{Policy: &RetentionPolicy{KeepLast: 2 * index.MaxTreeDeltaDepth}})
	if !committing.Load() || !errors.Is(err, errnoEIO) {
		t.Fatalf("gc with its sweep failing (reached: %v): %v, want %v", committing.Load(), err, errnoEIO)
	}
	f.e.Close()
	f.e = nil
	cp := filepath.Join(t.TempDir(), "store")
	copyLiveStore(t, f.store, cp)
	f.store = cp
	f.open(Options{})
	mustVerify(t, f.e)
	for k := len(cps) - 2*index.MaxTreeDeltaDepth; k < len(cps); k++ {
		f.restore(cps[k].String(), RestoreOptions{NoBackup: true, Force: true})
		assertSameTree(t, states[k], f.read())
	}
}

// A delta tree whose base is gone is damage verify reports at the delta.
func TestVerifyFindsAMissingTreeDeltaBase(t *testing.T) {
	f, _, _ := treeHistory(t, 2)
	var delta, base objects.ID
	for id, b := range treeDeltas(t, f.e.db) {
		delta, base = id, b
	}
	if delta.IsZero() {
		t.Fatal("no tree stored as a delta")
	}
	b := f.e.db.NewBatch()
	b.DeleteTree(base)
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	rep, err := f.e.Verify(context.Background(), VerifyOptions{})
	if rep == nil || err == nil {
		t.Fatalf("verify after deleting a delta's base: %v", err)
	}
	for _, p := range rep.Problems {
		if strings.Contains(p.String(), delta.Short()) && strings.Contains(p.String(), "base") {
			return
		}
	}
	t.Fatalf("no problem names delta tree %s: %v", delta.Short(), rep.Problems)
}
