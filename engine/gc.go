package engine

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/ckpt/ckpt/engine/internal/maint"
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
// dead pack tails (those a crashed save left, too) are cut off. Small
// blobs are stored together in group records; a group counts by the share
// of it its live blobs make up, and one whose share is under RewriteBelow
// has its live blobs regrouped (and recompressed) into new groups when its
// pack is rewritten, so dead blobs do not outlive a collection that
// rewrites them.
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
	unlock, _, err := e.beginWrite(ctx)
	if err != nil {
		return nil, e.report(err, start)
	}
	defer unlock()
	res, err := e.gcLocked(ctx, opts)
	return res, e.report(err, start)
}

func (e *Engine) gcLocked(ctx context.Context, opts GCOptions) (*GCResult, error) {
	// A collection is a run of rewrites: the encoders of the recompression
	// level are not kept past it (the automatic one after a save included).
	defer e.blobs.ReleaseRecompression()
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
	var problems []maint.Problem
	st := e.maintStore()
	g, err := st.Load(ctx, func(p maint.Problem) {
		if !e.leftOnRemote(p) {
			problems = append(problems, p)
		}
	}, progressFunc(opts.Progress))
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		first := publicProblem(problems[0])
		return nil, &CorruptError{Store: e.storeDir, Object: first.Object,
			Err: fmt.Errorf("%s (%d problem(s) in all); nothing was collected", first, len(problems))}
	}
	res := &GCResult{Policy: policy}
	for _, d := range g.ApplyRetention(maint.Policy(policy), e.opts.now()) {
		res.Dropped = append(res.Dropped, DroppedCheckpoint{ID: ID(d.ID), Task: d.Task, Seq: d.Seq,
			Time: d.Time, Kind: publicKind(d.Kind), Reason: d.Reason})
	}
	swept, err := st.Collect(ctx, g, threshold, progressFunc(opts.Progress))
	if err != nil {
		return nil, err
	}
	e.run.similar, e.deltaBases = nil, nil // the collection compressed whatever was deferred
	res.CheckpointsDeleted, res.TreesDeleted, res.BlobsDeleted = swept.CheckpointsDeleted, swept.TreesDeleted, swept.BlobsDeleted
	res.DirCachesDropped, res.PacksRewritten = swept.DirCachesDropped, swept.PacksRewritten
	res.PacksRemoved, res.PacksTruncated, res.BytesCopied = swept.PacksRemoved, swept.PacksTruncated, swept.BytesCopied
	res.PackBytesBefore, res.PackBytesAfter = swept.PackBytesBefore, swept.PackBytesAfter
	res.Duration = time.Since(start)
	return res, nil
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
		e.emit(Event{Type: EventError, Err: translate(fmt.Errorf("automatic gc: %w", err), e.storeDir), Duration: time.Since(start)})
	}
}

// autoGC collects when the store's policy asks for it (see maybeAutoGC).
func (e *Engine) autoGC(ctx context.Context) error {
	policy, err := e.retention()
	if err != nil || policy.MaxSize <= 0 {
		return err
	}
	size, err := e.maintStore().PackBytes()
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
