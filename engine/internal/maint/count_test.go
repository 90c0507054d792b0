package maint

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/objects"
)

// groupStore writes three small blobs into one group record and saves
// task x (x@1 holds a and b, x@2 holds a) and task y (y@1 holds c). It
// returns the store, the blob ids and the group record's length.
func groupStore(t *testing.T) (*Store, [3]objects.ID, int64) {
	t.Helper()
	dir := t.TempDir()
	db, err := index.Open(filepath.Join(dir, "index"), index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	blobs, err := objects.Open(dir, db, objects.Options{Groups: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { blobs.Close() })
	ob := blobs.NewBatch()
	defer ob.Close()
	var ids [3]objects.ID
	for i, s := range []string{"alpha content", "beta content", "gamma content"} {
		if ids[i], err = ob.PutBytes([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	placed, err := ob.Sync()
	if err != nil {
		t.Fatal(err)
	}
	b := db.NewBatch()
	defer b.Close()
	for _, p := range placed {
		if keyOf(p.Loc) != keyOf(placed[0].Loc) || !p.Loc.Grouped() {
			t.Fatalf("fixture: blobs not in one group record: %+v", placed)
		}
		b.PutLocator(p.ID, p.Loc)
	}
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	save := func(task string, seq uint64, head bool, blobs ...objects.ID) {
		var tr objects.Tree
		for i, id := range blobs {
			tr.Entries = append(tr.Entries, objects.Entry{Name: string(rune('a' + i)), Kind: objects.KindFile, Mode: 0o644, Size: 13, ID: id})
		}
		root, err := b.PutTree(tr)
		if err != nil {
			t.Fatal(err)
		}
		id, err := b.PutCheckpoint(index.Checkpoint{Task: task, Seq: seq, Root: root, Time: at.Add(time.Duration(seq) * time.Minute), Kind: index.KindSave})
		if err != nil {
			t.Fatal(err)
		}
		if head {
			b.SetTaskHead(task, index.TaskHead{Head: id, LastSeq: seq})
		}
	}
	save("x", 1, false, ids[0], ids[1])
	save("x", 2, true, ids[0])
	save("y", 1, true, ids[2])
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	return &Store{Dir: dir, DB: db, Blobs: blobs}, ids, int64(placed[0].Loc.Length)
}

// TestGroupRecordCountsOnce checks that a group record is counted once in
// live bytes, belongs to no task when two tasks share it, and is freed
// only with its last live member.
func TestGroupRecordCountsOnce(t *testing.T) {
	s, _, length := groupStore(t)
	g, err := s.Load(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := g.liveBytes(); got != length {
		t.Fatalf("live bytes %d, want the one record's %d", got, length)
	}
	if ex := g.ExclusiveBytes(); ex["x"] != 0 || ex["y"] != 0 {
		t.Fatalf("exclusive bytes %v, want none: both tasks share the record", ex)
	}
	freed := int64(0)
	for _, c := range g.cps {
		if c.cp.Task == "x" {
			freed += g.release(c)
		}
	}
	if freed != 0 {
		t.Fatalf("dropping task x frees %d bytes, want 0: y still holds the record", freed)
	}
	for _, c := range g.cps {
		if c.cp.Task == "y" {
			freed += g.release(c)
		}
	}
	if freed != length {
		t.Fatalf("dropping both tasks frees %d bytes, want %d", freed, length)
	}
}

// TestCollectRegroupsOnlyMostlyDeadGroups drops the checkpoint that alone
// held blob b, leaving a and c live, some two thirds of the group. Below
// that threshold the group record stays whole and its pack untouched; at
// threshold 1 the live members move into a new, smaller group and the old
// pack goes. Either way b's locator goes and the live members verify.
func TestCollectRegroupsOnlyMostlyDeadGroups(t *testing.T) {
	for _, tc := range []struct {
		threshold float64
		regroup   bool
	}{{0.5, false}, {1, true}} {
		s, ids, _ := groupStore(t)
		g, err := s.Load(context.Background(), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if d := g.ApplyRetention(Policy{KeepLast: 1}, time.Now()); len(d) != 1 || d[0].Task != "x" || d[0].Seq != 1 {
			t.Fatalf("dropped %+v, want x@1", d)
		}
		before, err := s.PackBytes()
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Collect(context.Background(), g, tc.threshold, nil)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case res.BlobsDeleted != 1 || res.PacksTruncated != 0:
			t.Fatalf("threshold %v: collect = %+v, want b's locator deleted", tc.threshold, res)
		case !tc.regroup && (res.PacksRewritten != 0 || res.PackBytesAfter != before):
			t.Fatalf("threshold %v: collect = %+v, want the pack (%d bytes) untouched", tc.threshold, res, before)
		case tc.regroup && (res.PacksRewritten != 1 || res.PackBytesAfter >= before):
			t.Fatalf("threshold %v: collect = %+v, want a smaller group than %d bytes", tc.threshold, res, before)
		}
		if _, found, _ := s.DB.Locator(ids[1]); found {
			t.Fatal("dead member b keeps its locator")
		}
		for _, id := range []objects.ID{ids[0], ids[2]} {
			loc, _, _ := s.DB.Locator(id)
			if !loc.Grouped() {
				t.Fatalf("threshold %v: live blob moved out of a group: %+v", tc.threshold, loc)
			}
		}
		rep, err := s.Verify(context.Background(), false, nil)
		if err != nil || len(rep.Problems) != 0 || rep.Blobs != 2 {
			t.Fatalf("threshold %v: verify = %+v, %v", tc.threshold, rep, err)
		}
	}
}
