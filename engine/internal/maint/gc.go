package maint

import (
	"cmp"
	"context"
	"errors"
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
// stat-cache directories that vouch for swept ids; only then are old
// packs removed and dead tails cut off. A group record counts by the share
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
	sizes, nums, err := s.PackSizes()
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
		u := &packUse{n: n, size: sizes[n], end: objects.PackHeaderSize, deferred: slices.Contains(deferred, n)}
		byNum[n] = u
		out = append(out, u)
	}
	g.eachLiveRecord(func(loc objects.Locator, r *record) {
		u := byNum[loc.Pack]
		if u == nil || err != nil {
			return
		}
		live := int64(loc.Length)
		if loc.Flags&objects.FlagGroup != 0 {
			live, err = s.groupLive(loc, r, threshold)
		}
		u.live += live
		u.end = max(u.end, loc.Offset+int64(loc.Length))
	})
	if err != nil {
		return nil, err
	}
	for _, u := range out {
		body := u.size - objects.PackHeaderSize
		holes := u.end - objects.PackHeaderSize - u.live
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

// rewriteRec is one live blob of a pack being rewritten, and how it moves.
type rewriteRec struct {
	id  objects.ID
	loc objects.Locator
	how rewriteMode
}

// rewriteMode is how a rewrite moves one live blob.
type rewriteMode int

const (
	viaCopy       rewriteMode = iota // its record, unchanged (a group whole, once)
	viaRegroup                       // into a new group, recompressed
	viaRecompress                    // into a record of its own, recompressed
)

// rewriteHow chooses how blob b moves when its pack is rewritten: the
// members of a mostly dead group are regrouped; every blob of a deferred
// pack is compressed (see deferredHow); other records are copied.
func rewriteHow(b *blobNode, deferred bool) rewriteMode {
	switch {
	case b.rec.regroup:
		return viaRegroup
	case !deferred:
		return viaCopy
	}
	return deferredHow(b.loc)
}

// deferredHow is how a blob of a deferred pack moves: small ones (and
// group members) into new groups, larger ones recompressed into records
// of their own; a chunk list is copied (its chunks have locators of their
// own).
func deferredHow(loc objects.Locator) rewriteMode {
	switch {
	case loc.Flags&objects.FlagChunked != 0:
		return viaCopy
	case loc.Regroupable():
		return viaRegroup
	}
	return viaRecompress
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
	var recs []rewriteRec
	for id, b := range g.blobs {
		if u := rewrite[b.loc.Pack]; b.refs > 0 && b.rec != nil && u != nil {
			recs = append(recs, rewriteRec{id, b.loc, rewriteHow(b, u.deferred)})
		}
	}
	return s.rewriteRecords(ctx, recs, progress, res)
}

// rewriteRecords moves recs into new packs as each one's rewriteMode says
// and fsyncs them, returning the new locators, not yet committed. On
// failure the new packs are removed.
func (s *Store) rewriteRecords(ctx context.Context, recs []rewriteRec, progress func(Progress),
	res *Swept) (map[objects.ID]objects.Locator, error) {
	if len(recs) == 0 {
		return nil, nil
	}
	slices.SortFunc(recs, func(a, b rewriteRec) int {
		return cmp.Or(cmp.Compare(a.loc.Pack, b.loc.Pack), cmp.Compare(a.loc.Offset, b.loc.Offset), cmp.Compare(a.loc.Member, b.loc.Member))
	})
	rw := s.Blobs.NewRewriter()
	defer rw.Close()
	moved := make(map[objects.ID]objects.Locator, len(recs))
	copied := map[recordKey]bool{}
	for i, r := range recs {
		if err := ctx.Err(); err != nil {
			return nil, s.abandonCopies(rw, err)
		}
		if progress != nil && i%256 == 0 {
			progress(Progress{Phase: "rewrite", Done: int64(i), Total: int64(len(recs))})
		}
		if r.how == viaRegroup {
			s.step("regroup")
			if err := rw.Regroup(r.id, r.loc); err != nil {
				return nil, s.abandonCopies(rw, err)
			}
			continue
		}
		s.step("copy")
		copyRecord := rw.Copy
		if r.how == viaRecompress {
			copyRecord = rw.Recompress
		}
		loc, err := copyRecord(r.id, r.loc)
		if err != nil {
			return nil, s.abandonCopies(rw, err)
		}
		moved[r.id] = loc
		if !copied[keyOf(loc)] {
			copied[keyOf(loc)] = true
			res.BytesCopied += int64(loc.Length)
		}
	}
	s.step("sync")
	regrouped, err := rw.Sync()
	if err != nil {
		return nil, s.abandonCopies(rw, err)
	}
	for _, p := range regrouped {
		moved[p.ID] = p.Loc
		if !copied[keyOf(p.Loc)] {
			copied[keyOf(p.Loc)] = true
			res.BytesCopied += int64(p.Loc.Length)
		}
	}
	return moved, nil
}

// abandonCopies removes the packs a failed rewrite created (nothing
// references them) and returns err.
func (s *Store) abandonCopies(rw *objects.Rewriter, err error) error {
	rw.Close()
	for _, n := range rw.Packs() {
		err = errors.Join(err, s.Blobs.RemovePack(n))
	}
	return err
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
		err = s.DB.EachTree(func(id objects.ID) error {
			if !g.liveTree(id) {
				b.DeleteTree(id)
				res.TreesDeleted++
			}
			return nil
		})
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
