package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/ckpt/ckpt/internal/index"
	"github.com/ckpt/ckpt/internal/objects"
)

// DefaultRewriteBelow is the live fraction under which GC rewrites a pack.
const DefaultRewriteBelow = 0.5

// GCOptions configure GC.
type GCOptions struct {
	// Policy selects the checkpoints to drop; nil means the store's default
	// (Retention).
	Policy *RetentionPolicy
	// RewriteBelow: a pack whose live records fill less than this fraction
	// of it is rewritten. 0 means DefaultRewriteBelow; 1 rewrites every pack
	// holding any dead record.
	RewriteBelow float64
	// Progress, when set, is called as the collection advances.
	Progress func(PhaseProgress)
}

// GCResult reports what GC did.
type GCResult struct {
	Policy             RetentionPolicy
	Dropped            []DroppedCheckpoint
	CheckpointsDeleted int // dropped ones plus orphans no task listed
	TreesDeleted       int
	BlobsDeleted       int // locators removed: blobs and chunks no checkpoint reaches
	DirCachesDropped   int // stat-cache directories that vouched for swept ids
	PacksRewritten     int
	PacksRemoved       int // rewritten packs and packs without a live record
	PacksTruncated     int // dead tails cut off
	BytesCopied        int64
	PackBytesBefore    int64
	PackBytesAfter     int64
	Duration           time.Duration
}

// Reclaimed is the pack bytes the collection freed on disk.
func (r *GCResult) Reclaimed() int64 { return r.PackBytesBefore - r.PackBytesAfter }

// GC drops the checkpoints the retention policy selects, then marks every
// tree, blob and chunk reachable from a remaining checkpoint and sweeps the
// rest: dead locators, trees and checkpoints go in one index commit, packs
// mostly dead are rewritten, packs without a live record are removed and
// dead pack tails (those a crashed save left, too) are cut off.
//
// GC is crash-safe at every step: live records are copied into new packs
// and fsynced before the one synced index batch that switches their
// locators and deletes what died; old packs are removed only after it. A
// kill at any point leaves a store that verifies and has lost no live
// blob; the next GC reclaims what the killed one left. Stat-cache entries
// that vouch for swept ids are dropped in the same batch, so a later save
// re-hashes those directories instead of referencing a missing blob.
//
// GC holds the store lock (other processes wait) and is serialised with
// every other write of this Engine. A store that fails an integrity check
// while being marked is left untouched and the error wraps ErrCorrupt.
func (e *Engine) GC(ctx context.Context, opts GCOptions) (*GCResult, error) {
	start := time.Now()
	unlock, err := e.lockForWrite()
	if err != nil {
		return nil, e.report(err, start)
	}
	defer unlock()
	res, err := e.gcLocked(ctx, opts)
	return res, e.report(err, start)
}

func (e *Engine) gcLocked(ctx context.Context, opts GCOptions) (*GCResult, error) {
	start := time.Now()
	var policy RetentionPolicy
	if opts.Policy != nil {
		policy = *opts.Policy
	} else {
		var err error
		if policy, err = e.retention(); err != nil {
			return nil, err
		}
	}
	if err := policy.validate(); err != nil {
		return nil, err
	}
	threshold := opts.RewriteBelow
	if threshold <= 0 {
		threshold = DefaultRewriteBelow
	}
	var problems []Problem
	g, err := e.loadGraph(ctx, func(p Problem) { problems = append(problems, p) }, opts.Progress)
	if err != nil {
		return nil, storeError(err, e.storeDir)
	}
	if len(problems) > 0 {
		return nil, &CorruptError{Store: e.storeDir, Object: problems[0].Object,
			Err: fmt.Errorf("%s (%d problem(s) in all); nothing was collected", problems[0], len(problems))}
	}
	res := &GCResult{Policy: policy}
	res.Dropped = g.applyRetention(policy, e.opts.now())
	packs, err := e.packUsage(g, threshold)
	if err != nil {
		return nil, err
	}
	for _, u := range packs {
		res.PackBytesBefore += u.size
	}
	moved, err := e.rewritePacks(ctx, g, packs, opts.Progress, res)
	if err != nil {
		return nil, err
	}
	if err := e.commitSweep(g, moved, res); err != nil {
		return nil, err
	}
	if err := e.reclaimPacks(packs, res); err != nil {
		return nil, err
	}
	if res.PackBytesAfter, err = e.packBytes(); err != nil {
		return nil, err
	}
	res.Duration = time.Since(start)
	return res, nil
}

// packAction is what GC does with one pack.
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
}

// packUsage measures every pack on disk against the live blobs of g and
// decides what to do with it.
func (e *Engine) packUsage(g *refGraph, threshold float64) ([]*packUse, error) {
	nums, err := e.blobs.Packs()
	if err != nil {
		return nil, err
	}
	byNum := make(map[uint32]*packUse, len(nums))
	out := make([]*packUse, 0, len(nums))
	for _, n := range nums {
		fi, err := os.Stat(e.blobs.PackPath(n))
		if err != nil {
			return nil, fmt.Errorf("gc: %w", err)
		}
		u := &packUse{n: n, size: fi.Size(), end: objects.PackHeaderSize}
		byNum[n] = u
		out = append(out, u)
	}
	for _, b := range g.blobs {
		if u := byNum[b.loc.Pack]; u != nil && b.refs > 0 && !b.missing {
			u.live += int64(b.loc.Length)
			u.end = max(u.end, b.loc.Offset+int64(b.loc.Length))
		}
	}
	for _, u := range out {
		body := u.size - objects.PackHeaderSize
		holes := u.end - objects.PackHeaderSize - u.live
		switch {
		case u.live == 0:
			u.action = packRemove
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

// rewritePacks copies the live records of the packs marked for rewriting
// into new packs and fsyncs them (step 1 of the crash-safe order). It
// returns the new locators, not yet committed.
func (e *Engine) rewritePacks(ctx context.Context, g *refGraph, packs []*packUse,
	progress func(PhaseProgress), res *GCResult) (map[objects.ID]objects.Locator, error) {
	rewrite := map[uint32]bool{}
	for _, u := range packs {
		if u.action == packRewrite {
			rewrite[u.n] = true
			res.PacksRewritten++
		}
	}
	type rec struct {
		id  objects.ID
		loc objects.Locator
	}
	var recs []rec
	for id, b := range g.blobs {
		if b.refs > 0 && !b.missing && rewrite[b.loc.Pack] {
			recs = append(recs, rec{id, b.loc})
		}
	}
	if len(recs) == 0 {
		return nil, nil
	}
	slices.SortFunc(recs, func(a, b rec) int {
		return cmp.Or(cmp.Compare(a.loc.Pack, b.loc.Pack), cmp.Compare(a.loc.Offset, b.loc.Offset))
	})
	rw := e.blobs.NewRewriter()
	defer rw.Close()
	moved := make(map[objects.ID]objects.Locator, len(recs))
	for i, r := range recs {
		if err := ctx.Err(); err != nil {
			return nil, e.abandonCopies(rw, err)
		}
		e.opts.step("copy")
		loc, err := rw.Copy(r.id, r.loc)
		if err != nil {
			return nil, e.abandonCopies(rw, storeError(err, e.storeDir))
		}
		moved[r.id] = loc
		res.BytesCopied += int64(loc.Length)
		if progress != nil && i%256 == 0 {
			progress(PhaseProgress{Phase: "rewrite", Done: int64(i), Total: int64(len(recs))})
		}
	}
	e.opts.step("sync")
	if err := rw.Sync(); err != nil {
		return nil, e.abandonCopies(rw, err)
	}
	return moved, nil
}

// abandonCopies removes the packs a failed rewrite created (nothing
// references them) and returns err.
func (e *Engine) abandonCopies(rw *objects.Rewriter, err error) error {
	rw.Close()
	for _, n := range rw.Packs() {
		err = errors.Join(err, e.blobs.RemovePack(n))
	}
	return err
}

// commitSweep is step 2: one synced index batch that switches the moved
// locators and deletes dead locators, trees, checkpoints and the stat-cache
// directories that vouch for swept ids.
func (e *Engine) commitSweep(g *refGraph, moved map[objects.ID]objects.Locator, res *GCResult) error {
	b := e.db.NewBatch()
	defer b.Close()
	for id, loc := range moved {
		b.PutLocator(id, loc)
	}
	err := e.db.EachLocator(func(id objects.ID, _ objects.Locator) error {
		if !g.liveBlob(id) {
			b.DeleteLocator(id)
			res.BlobsDeleted++
		}
		return nil
	})
	if err == nil {
		err = e.db.EachTree(func(id objects.ID) error {
			if !g.liveTree(id) {
				b.DeleteTree(id)
				res.TreesDeleted++
			}
			return nil
		})
	}
	if err == nil {
		err = e.sweepCheckpoints(g, b, res)
	}
	if err == nil {
		err = e.db.AllDirCaches(func(dir string, dc index.DirCache) error {
			if !dirCacheLive(g, dc) {
				b.DeleteDirCache(dir)
				res.DirCachesDropped++
			}
			return nil
		})
	}
	if err != nil {
		return storeError(err, e.storeDir)
	}
	e.opts.step("commit")
	if err := b.Commit(); err != nil {
		return fmt.Errorf("gc: commit index: %w", err)
	}
	return nil
}

// sweepCheckpoints deletes the dropped checkpoints, and checkpoints no
// task lists (left by nothing ckpt does, but unreachable all the same).
func (e *Engine) sweepCheckpoints(g *refGraph, b *index.Batch, res *GCResult) error {
	listed := make(map[objects.ID]bool, len(g.cps))
	for _, c := range g.cps {
		listed[c.id] = !c.released
		if c.released {
			b.DeleteCheckpoint(c.id, c.cp.Task, c.cp.Seq)
			res.CheckpointsDeleted++
		}
	}
	return e.db.EachCheckpoint(func(id objects.ID, cp index.Checkpoint) error {
		if _, ok := listed[id]; ok {
			return nil
		}
		at, found, err := e.db.CheckpointAt(cp.Task, cp.Seq)
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
func dirCacheLive(g *refGraph, dc index.DirCache) bool {
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
func (e *Engine) reclaimPacks(packs []*packUse, res *GCResult) error {
	for _, u := range packs {
		switch u.action {
		case packRemove, packRewrite:
			e.opts.step("remove")
			if err := e.blobs.RemovePack(u.n); err != nil {
				return err
			}
			res.PacksRemoved++
		case packTruncate:
			e.opts.step("truncate")
			if err := e.blobs.TruncatePack(u.n, u.end); err != nil {
				return err
			}
			res.PacksTruncated++
		}
	}
	return nil
}

// packBytes is the size of every pack on disk.
func (e *Engine) packBytes() (int64, error) {
	nums, err := e.blobs.Packs()
	if err != nil {
		return 0, err
	}
	var total int64
	for _, n := range nums {
		fi, err := os.Stat(e.blobs.PackPath(n))
		if err != nil {
			return 0, fmt.Errorf("gc: %w", err)
		}
		total += fi.Size()
	}
	return total, nil
}

// maybeAutoGC runs after a successful save, under the write lock: when the
// store's policy has a MaxSize and the packs exceed it, it collects with
// that policy. Should the heads alone exceed the cap, the next automatic
// collection waits until the store grew by a tenth of the cap again. The
// save has committed already, so a failure is reported as an error event
// and does not fail the save.
func (e *Engine) maybeAutoGC(ctx context.Context) {
	start := time.Now()
	if err := e.autoGC(ctx); err != nil {
		e.emit(Event{Type: EventError, Err: translate(fmt.Errorf("automatic gc: %w", err)), Duration: time.Since(start)})
	}
}

// autoGC collects when the store's policy asks for it (see maybeAutoGC).
func (e *Engine) autoGC(ctx context.Context) error {
	policy, err := e.retention()
	if err != nil || policy.MaxSize <= 0 {
		return err
	}
	size, err := e.packBytes()
	if err != nil {
		return err
	}
	after, err := e.configInt(configAutoAfter)
	if err != nil {
		return err
	}
	if stillOver := after > policy.MaxSize && size <= after+policy.MaxSize/10; size <= policy.MaxSize || stillOver {
		return nil
	}
	res, err := e.gcLocked(ctx, GCOptions{Policy: &policy})
	if err != nil {
		return err
	}
	b := e.db.NewBatch()
	defer b.Close()
	b.SetConfig(configAutoAfter, strconv.FormatInt(res.PackBytesAfter, 10))
	return b.Commit()
}
