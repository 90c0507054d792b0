package maint

import (
	"context"
	"fmt"
	"slices"

	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/objects"
)

// Swept counts what a collection did.
type Swept struct {
	CheckpointsDeleted int
	TreesDeleted       int
	BlobsDeleted       int
	DirCachesDropped   int
	PacksRewritten     int
	PacksRemoved       int
	PacksTruncated     int
	BytesCopied        int64
	PackBytesBefore    int64
	PackBytesAfter     int64
}

// Collect sweeps what g no longer references, in the crash-safe order:
// the live records of mostly dead packs (live fraction below threshold)
// are copied into new packs and fsynced; one synced index batch switches
// their locators and deletes dead locators, trees, checkpoints and the
// stat-cache directories that vouch for swept ids, storing anew the live
// trees whose base it deletes; only then are old packs removed and dead
// tails cut off, and the index compacted so that what the batch deleted
// leaves the disk too. A group record counts by the share
// of its content its live members make up: a rewritten pack's group whose
// live share is under threshold has its live members regrouped (and
// recompressed) into new groups; one above it is copied whole.
func (s *Store) Collect(ctx context.Context, g *Graph, threshold float64, progress func(Progress)) (*Swept, error) {
	res := &Swept{}
	packs, err := s.packUsage(g, threshold)
	if err != nil {
		return nil, err
	}
	for _, u := range packs {
		res.PackBytesBefore += u.size
	}
	moved, err := s.rewritePacks(ctx, g, packs, progress, res)
	if err != nil {
		return nil, err
	}
	if err := s.commitSweep(g, moved, res); err != nil {
		return nil, err
	}
	if err := s.reclaimPacks(packs, res); err != nil {
		return nil, err
	}
	if err := s.DB.Compact(ctx); err != nil {
		return nil, err
	}
	if res.PackBytesAfter, err = s.PackBytes(); err != nil {
		return nil, err
	}
	return res, nil
}

// packAction is what a collection does with one pack.
type packAction int

const (
	packKeep packAction = iota
	packRemove
	packRewrite
	packTruncate
)

// packUse is the live content of one pack.
type packUse struct {
	n      uint32
	size   int64 // on disk
	start  int64 // offset of its first record
	live   int64 // bytes of live records
	end    int64 // end of the last live record
	action packAction
	// deferred: a save stored the pack's records uncompressed; rewriting
	// it compresses every live record.
	deferred bool
}

// packUsage measures every pack on disk against the live records of g
// and decides what to do with it.
func (s *Store) packUsage(g *Graph, threshold float64) ([]*packUse, error) {
	files, nums, err := s.Blobs.PackFiles()
	if err != nil {
		return nil, err
	}
	deferred, err := s.Blobs.DeferredPacks()
	if err != nil {
		return nil, err
	}
	byNum := make(map[uint32]*packUse, len(nums))
	out := make([]*packUse, 0, len(nums))
	for _, n := range nums {
		u := &packUse{n: n, size: files[n].Size, start: files[n].Start, end: files[n].Start, deferred: slices.Contains(deferred, n)}
		byNum[n] = u
		out = append(out, u)
	}
	g.eachLiveRecord(func(loc objects.Locator, r *record) {
		u := byNum[loc.Pack]
		if u == nil || err != nil {
			return
		}
		live := int64(loc.Length)
		if loc.Grouped() {
			live, err = s.groupLive(loc, r, threshold)
		}
		u.live += live
		u.end = max(u.end, loc.Offset+int64(loc.Length))
	})
	if err != nil {
		return nil, err
	}
	for _, u := range out {
		body := u.size - u.start
		holes := u.end - u.start - u.live
		switch {
		case u.live == 0:
			u.action = packRemove
		case u.deferred:
			u.action = packRewrite
		case holes == 0 && u.end < u.size:
			u.action = packTruncate
		case body > 0 && float64(u.live)/float64(body) < threshold:
			u.action = packRewrite
		case u.end < u.size:
			u.action = packTruncate
		}
	}
	return out, nil
}

// groupLive weighs the group record holding loc: the share of its stored
// bytes its live members make up (their content and table entries, and
// the member count, against the group's decoded length). A group whose
// live share is under threshold is marked for regrouping, so rewriting its
// pack keeps only its live members; otherwise it counts whole and is
// copied whole.
func (s *Store) groupLive(loc objects.Locator, r *record, threshold float64) (int64, error) {
	share, err := s.Blobs.GroupShare(loc, int(r.live), r.liveRaw)
	if err != nil || share >= threshold {
		return int64(loc.Length), err
	}
	r.regroup = true
	return max(1, int64(share*float64(loc.Length))), nil
}

// rewriteHow chooses how blob b moves when its pack is rewritten: the
// members of a mostly dead group are regrouped; every blob of a deferred
// pack is compressed (see deferredHow); other records are copied.
func rewriteHow(b *blobNode, deferred bool) objects.MoveMode {
	switch {
	case b.rec.regroup:
		return objects.MoveRegroup
	case !deferred:
		return objects.MoveCopy
	}
	return deferredHow(b.loc)
}

// deferredHow is how a blob of a deferred pack moves: small ones (and
// group members) into new groups, larger ones recompressed into records
// of their own; a chunk list is copied (its chunks have locators of their
// own).
func deferredHow(loc objects.Locator) objects.MoveMode {
	switch {
	case loc.Chunked():
		return objects.MoveCopy
	case loc.Regroupable():
		return objects.MoveRegroup
	}
	return objects.MoveRecompress
}

// rewritePacks copies the live records of the packs marked for rewriting
// into new packs and fsyncs them (step 1 of the crash-safe order). It
// returns the new locators, not yet committed.
func (s *Store) rewritePacks(ctx context.Context, g *Graph, packs []*packUse,
	progress func(Progress), res *Swept) (map[objects.ID]objects.Locator, error) {
	rewrite := map[uint32]*packUse{}
	for _, u := range packs {
		if u.action == packRewrite {
			rewrite[u.n] = u
			res.PacksRewritten++
		}
	}
	var moves []objects.Move
	for id, b := range g.blobs {
		if u := rewrite[b.loc.Pack]; b.refs > 0 && b.rec != nil && u != nil {
			moves = append(moves, objects.Move{ID: id, Loc: b.loc, How: rewriteHow(b, u.deferred)})
		}
	}
	return s.rewrite(ctx, moves, progress, res)
}

// rewrite moves blobs into new packs as each Move says and fsyncs them,
// returning the new locators, not yet committed, and counting the bytes
// of each record written once.
func (s *Store) rewrite(ctx context.Context, moves []objects.Move, progress func(Progress),
	res *Swept) (map[objects.ID]objects.Locator, error) {
	rewrite := s.Blobs.Rewrite
	if s.SaveLevel {
		rewrite = s.Blobs.RewriteAtSaveLevel
	}
	placed, err := rewrite(ctx, moves, func(op string, done int) {
		if progress != nil && op != "sync" && done%256 == 0 {
			progress(Progress{Phase: "rewrite", Done: int64(done), Total: int64(len(moves))})
		}
		s.step(op)
	})
	if err != nil {
		return nil, err
	}
	moved := make(map[objects.ID]objects.Locator, len(placed))
	copied := map[recordKey]bool{}
	for _, p := range placed {
		moved[p.ID] = p.Loc
		if !copied[keyOf(p.Loc)] {
			copied[keyOf(p.Loc)] = true
			res.BytesCopied += int64(p.Loc.Length)
		}
	}
	return moved, nil
}

// commitSweep is step 2: one synced index batch that switches the moved
// locators and deletes dead locators, trees, checkpoints and the stat-cache
// directories that vouch for swept ids.
func (s *Store) commitSweep(g *Graph, moved map[objects.ID]objects.Locator, res *Swept) error {
	b := s.DB.NewBatch()
	defer b.Close()
	for id, loc := range moved {
		b.PutLocator(id, loc)
	}
	err := s.DB.EachLocator(func(id objects.ID, _ objects.Locator) error {
		if !g.liveBlob(id) {
			b.DeleteLocator(id)
			res.BlobsDeleted++
		}
		return nil
	})
	if err == nil {
		err = s.sweepTrees(g, b, res)
	}
	if err == nil {
		err = s.sweepCheckpoints(g, b, res)
	}
	if err == nil {
		err = s.DB.AllDirCaches(func(dir string, dc index.DirCache) error {
			if !dirCacheLive(g, dc) {
				b.DeleteDirCache(dir)
				res.DirCachesDropped++
			}
			return nil
		})
	}
	if err != nil {
		return err
	}
	s.step("commit")
	if err := b.Commit(); err != nil {
		return fmt.Errorf("gc: commit index: %w", err)
	}
	return nil
}

// sweepTrees deletes the dead trees, and stores anew every live tree
// stored as a delta of a dead one: reading a delta needs its base. The
// live trees that were deltas of the same dead tree are stored as one
// family (index.Batch.PutTreeFamily): the first whole, the others as
// deltas of it. Versions of a directory that went on from the same tree
// (the middle of a full chain) differ from one another by a few entries,
// and a collection that drops old checkpoints deletes that tree for all
// of them at once.
func (s *Store) sweepTrees(g *Graph, b *index.Batch, res *Swept) error {
	orphans := map[objects.ID][]objects.ID{} // live trees, by their dead base, in id order
	err := s.DB.EachTreeBase(func(id, base objects.ID) error {
		switch {
		case !g.liveTree(id):
			b.DeleteTree(id)
			res.TreesDeleted++
		case !base.IsZero() && !g.liveTree(base):
			orphans[base] = append(orphans[base], id)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, ids := range orphans {
		family := make([]objects.Tree, len(ids))
		for i, id := range ids {
			if family[i], err = s.DB.Tree(id); err != nil {
				return err
			}
		}
		if err := b.PutTreeFamily(family); err != nil {
			return err
		}
	}
	return nil
}

// sweepCheckpoints deletes the dropped checkpoints, and checkpoints no
// task lists (left by nothing ckpt does, but unreachable all the same).
func (s *Store) sweepCheckpoints(g *Graph, b *index.Batch, res *Swept) error {
	listed := make(map[objects.ID]bool, len(g.cps))
	for _, c := range g.cps {
		listed[c.id] = !c.released
		if c.released {
			b.DeleteCheckpoint(c.id, c.cp.Task, c.cp.Seq)
			res.CheckpointsDeleted++
		}
	}
	return s.DB.EachCheckpoint(func(id objects.ID, cp index.Checkpoint) error {
		if _, ok := listed[id]; ok {
			return nil
		}
		at, found, err := s.DB.CheckpointAt(cp.Task, cp.Seq)
		if err != nil {
			return err
		}
		if !found || at == id {
			b.DeleteCheckpoint(id, cp.Task, cp.Seq)
			res.CheckpointsDeleted++
		}
		return nil
	})
}

// dirCacheLive reports whether every id a stat-cache directory vouches for
// (its tree, its entries' blobs or subtrees) survives the collection.
func dirCacheLive(g *Graph, dc index.DirCache) bool {
	if !g.liveTree(dc.Tree) {
		return false
	}
	for _, f := range dc.Entries {
		if !g.liveBlob(f.ID) && !g.liveTree(f.ID) {
			return false
		}
	}
	return true
}

// reclaimPacks is step 3, after the index no longer references what goes:
// remove rewritten and dead packs, cut dead tails.
func (s *Store) reclaimPacks(packs []*packUse, res *Swept) error {
	for _, u := range packs {
		switch u.action {
		case packRemove, packRewrite:
			s.step("remove")
			if err := s.Blobs.RemovePack(u.n); err != nil {
				return err
			}
			res.PacksRemoved++
		case packTruncate:
			s.step("truncate")
			if err := s.Blobs.TruncatePack(u.n, u.end); err != nil {
				return err
			}
			res.PacksTruncated++
		}
	}
	return nil
}
