package engine

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/ckpt/ckpt/objects"
)

// RecompressResult reports what Recompress or RecompressNext did.
type RecompressResult struct {
	Packs       int   // deferred packs rewritten compressed and removed
	Blobs       int   // blobs (and chunks) moved out of deferred packs
	Remaining   int   // deferred packs still waiting (a pack part done included)
	BytesBefore int64 // the stored bytes rewritten
	BytesAfter  int64 // the records written in their place
	Duration    time.Duration
}

// Recompress compresses what first saves with Options.DeferCompression
// stored uncompressed, one slice of a deferred pack at a time (see
// RecompressNext), until none is left or ctx ends; it then returns ctx's
// error with what it did. Each slice is committed on its own and the write
// lock is taken per slice, so another operation of this Engine waits at
// most one slice's work; a cancelled or killed run resumes where it
// stopped, since every pack still waiting keeps its marker and every
// committed slice stays done. GC does the same work for every
// deferred pack whenever it runs.
func (e *Engine) Recompress(ctx context.Context) (*RecompressResult, error) {
	return e.recompress(ctx, false)
}

// recompress is Recompress, compressing at a save's level instead of the
// recompression's when saveLevel is set (see maint.Store.SaveLevel).
func (e *Engine) recompress(ctx context.Context, saveLevel bool) (*RecompressResult, error) {
	start := time.Now()
	total := &RecompressResult{}
	for {
		res, err := e.recompressNext(ctx, saveLevel)
		if res != nil {
			total.Packs += res.Packs
			total.Blobs += res.Blobs
			total.BytesBefore += res.BytesBefore
			total.BytesAfter += res.BytesAfter
			total.Remaining = res.Remaining
		}
		total.Duration = time.Since(start)
		if err != nil || total.Remaining == 0 {
			return total, err
		}
	}
}

// RecompressNext rewrites the next slice of the lowest-numbered deferred
// pack (at most maint.DefaultSliceBytes of its records) compressed at a
// higher zstd level than a save's (small files into groups) and commits;
// the slice that empties the pack removes it (Packs 1). It is one step of
// Recompress, for a process that runs it while nothing else needs the
// store: bounded, so that a server whose requests cancel it still gets
// through a 128 MiB pack between requests. It drops nothing (every blob in
// the pack moves, reachable or not), is crash-safe like GC (a kill at any
// point leaves a store that verifies, and the pack stays marked until its
// blobs have moved) and holds the write lock for the one slice. It checks
// ctx between blobs: a cancelled slice removes what it wrote, leaves the
// pack as that slice found it and returns ctx's error. With no deferred
// pack it returns a zero result at once.
func (e *Engine) RecompressNext(ctx context.Context) (*RecompressResult, error) {
	return e.recompressNext(ctx, false)
}

// RecompressRun is what a run of RecompressNext slices learns once and
// keeps until the run ends: the index of the heads' files by their paths
// with the digits folded, which offers each blob its delta bases. See
// Options.RecompressRun. What it holds are hints: saves and collections
// between two opens that use it (by other processes too) cost bases, never
// a wrong record, since a base qualifies only as the store holds it when
// the delta is written. It is built again once a checkpoint it indexed is
// dropped, so that no delta keeps alive a file that only a dropped task
// held.
type RecompressRun struct {
	similar *similarFiles
	open    atomic.Bool // an open Engine uses it
}

// claim makes run the open Engine's, or fails with ErrBadRequest while
// another open Engine has it: two Engines writing one run's index at once
// would race on it.
func (run *RecompressRun) claim() error {
	if !run.open.CompareAndSwap(false, true) {
		return fmt.Errorf("%w: Options.RecompressRun is in use by another open Engine; close it first", ErrBadRequest)
	}
	return nil
}

// recompressNext is RecompressNext, at a save's level when saveLevel is set.
func (e *Engine) recompressNext(ctx context.Context, saveLevel bool) (*RecompressResult, error) {
	start := time.Now()
	unlock, err := e.lockForWrite()
	if err != nil {
		return nil, e.report(err, start)
	}
	defer unlock()
	res, err := e.recompressSlice(ctx, start, saveLevel)
	if err == nil {
		// A run's commits would otherwise pile up in the index's log
		// until the Close that a waiting command sits through flushed
		// them all.
		if ferr := e.db.FlushGrownLog(); ferr != nil {
			err = e.report(ferr, start)
		}
	}
	if err != nil || res.Remaining == 0 {
		// The encoders of the recompression level (tens of MiB of tables)
		// are kept while a run goes on, from one slice to the next, and
		// dropped by the slice that ends it: the last, a failed or a
		// cancelled one (a server's request pauses the run until the next
		// quiet period).
		e.blobs.ReleaseRecompression()
	}
	if (err != nil && ctx.Err() == nil) || (err == nil && res.Remaining == 0) {
		// The index of similar files (some 100 bytes a file) outlives a
		// cancelled slice: rebuilding it walks every tree of the heads.
		e.run.similar, e.deltaBases = nil, nil
	}
	return res, err
}

// recompressSlice is recompressNext under the write lock.
func (e *Engine) recompressSlice(ctx context.Context, start time.Time, saveLevel bool) (*RecompressResult, error) {
	deferred, err := e.blobs.DeferredPacks()
	if err != nil {
		return nil, e.report(err, start)
	}
	res := &RecompressResult{Remaining: len(deferred)}
	if len(deferred) == 0 {
		return res, nil
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	m := e.maintStore()
	m.SaveLevel = saveLevel
	if !saveLevel {
		// Deltas cost a frame at the recompression level per base tried:
		// a rewrite that something waits for goes without.
		if e.run.similar == nil || !e.run.similar.stillLive(e) {
			if e.run.similar, err = e.newSimilarFiles(ctx); err != nil {
				return res, err // ctx ended
			}
		}
		if e.deltaBases == nil {
			e.deltaBases = map[objects.Locator]objects.ID{}
		}
		m.Bases, m.DeltaBases = e.run.similar.bases, e.deltaBases
	}
	done, err := m.RecompressPack(ctx, deferred[0])
	if err != nil && ctx.Err() != nil {
		return res, ctx.Err() // cancelled, not failed: no error event
	}
	if err != nil {
		return res, e.report(err, start)
	}
	res.Blobs = done.Blobs
	if done.Finished {
		res.Packs, res.Remaining = 1, len(deferred)-1
	}
	res.BytesBefore, res.BytesAfter = done.BytesBefore, done.BytesAfter
	res.Duration = time.Since(start)
	return res, nil
}

// Deferred reports the packs waiting for recompression (see
// Options.DeferCompression): their size on disk and their number. It
// lists the pack directory only, so it is cheap enough to ask after every
// save.
func (e *Engine) Deferred() (bytes int64, packs int, err error) {
	deferred, err := e.blobs.DeferredPacks()
	if err != nil {
		return 0, 0, err
	}
	files, _, err := e.blobs.PackFiles()
	if err != nil {
		return 0, 0, err
	}
	for _, n := range deferred {
		bytes += files[n].Size
	}
	return bytes, len(deferred), nil
}
