package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/ckpt/ckpt/engine/internal/remotesync"
)

// SyncProgress reports how far a push, pull or fetch got in its current
// phase: "scan", "upload", "segment", "head", "import" or "fetch". Done
// and Total count bytes for upload and fetch, objects otherwise.
type SyncProgress struct {
	Phase       string
	Done, Total int64
}

// SyncTraffic is what a push, pull or clone sent to and read from the remote.
type SyncTraffic struct {
	Puts, Gets, Stats  int64
	BytesUp, BytesDown int64
	// ObjectsUp and SegmentsUp count the data objects and metadata
	// segments uploaded (not those found there already).
	ObjectsUp, SegmentsUp int64
}

// PushOptions select what Push sends and where the store records it.
type PushOptions struct {
	// Remote is the remote's name in the store (AddRemote); the store's
	// record of what that remote holds lives under it. Required.
	Remote string
	// Task is the task to push; "" means DefaultTask.
	Task     string
	Progress func(SyncProgress)
}

// PushResult says what Push did.
type PushResult struct {
	// Task is the task the remote holds this store's history under: the
	// task pushed, or Forked.
	Task        string
	Head        ID
	Checkpoints int // checkpoints uploaded
	// UpToDate: the remote had everything. Behind: the remote has saved
	// further and holds all of this store's checkpoints; pull to catch up.
	UpToDate, Behind bool
	// Forked is set when the remote's task had forked from the store's
	// (both saved since they last synced): the store's task was copied to
	// the task Forked ("<task>~<short id>"), locally and on the remote, and
	// the remote's task was left as it was. Both histories are kept. While
	// the remote's task stays forked, later pushes of the task advance the
	// same fork by the checkpoints saved since.
	Forked   string
	Traffic  SyncTraffic
	Duration time.Duration
}

// Push uploads to b what it lacks of a task: data first, then metadata,
// then the task's head, by a conditional write, so that the remote is
// consistent at every moment and two pushers of one task see each other.
// A push cut short (cancelled, killed, a failing remote) and run again
// uploads nothing it uploaded before. Packs a first save stored
// uncompressed (Options.DeferCompression) are compressed first, as
// Recompress would, so that neither the upload nor the remote nor a clone
// of it carries them raw. Push never overwrites another store's history:
// see PushResult.Forked. It fails with ErrUnknownRef for
// a task the store does not have, ErrBadRequest for an unknown remote, and
// a *CorruptError (ErrCorrupt) for a remote object that does not verify.
func (e *Engine) Push(ctx context.Context, b Backend, opts PushOptions) (*PushResult, error) {
	start := time.Now()
	res, err := e.push(ctx, b, opts)
	if err != nil {
		return nil, translate(remoteError(err, opts.Remote), e.storeDir)
	}
	res.Duration = time.Since(start)
	return res, nil
}

func (e *Engine) push(ctx context.Context, b Backend, opts PushOptions) (*PushResult, error) {
	var res *PushResult
	// Packs a first save left raw are compressed before they leave, a
	// slice at a time with the lock taken per slice (Recompress), so that
	// a save waits at most one slice for it; at a save's level, since the
	// push waits for it (the idle recompression's best level took 30 s
	// of a 100k-file first push, against 9 s).
	if _, packs, err := e.Deferred(); err != nil {
		return nil, err
	} else if packs > 0 {
		if _, err := e.recompress(ctx, true); err != nil {
			return nil, fmt.Errorf("push to %s: compress the packs a first save deferred: %w", opts.Remote, err)
		}
	}
	err := e.withSyncer(ctx, b, opts.Remote, opts.Task, opts.Progress, func(s *remotesync.Syncer, task string) error {
		r, err := s.Push(ctx, task)
		if err != nil {
			return fmt.Errorf("push %q to %s: %w", task, opts.Remote, err)
		}
		res = &PushResult{Task: r.Task, Head: ID(r.Head), Checkpoints: r.Checkpoints, UpToDate: r.UpToDate,
			Behind: r.Behind, Forked: r.Forked, Traffic: SyncTraffic(s.Counters())}
		return nil
	})
	return res, err
}

// withSyncer runs fn with the mechanics of remote name over b and the task
// opts name, holding the Engine's write lock.
// It fails before any change unless b is encrypted exactly as the store
// records the remote (checkKeying).
func (e *Engine) withSyncer(ctx context.Context, b Backend, name, task string, progress func(SyncProgress), fn func(*remotesync.Syncer, string) error) error {
	task, err := taskName(task)
	if err != nil {
		return err
	}
	if err := e.checkKeying(ctx, name, b); err != nil {
		return err
	}
	unlock, _, err := e.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	return fn(e.syncer(name, b, progress), task)
}
