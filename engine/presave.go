package engine

import (
	"context"

	"github.com/ckpt/ckpt/engine/internal/save"
)

// presaveDelay is how long after the last write the watcher heard the
// presaver stores what was written: by then the stat-cache records it takes
// are trusted (save.RefreshDelay), and a burst of writes is over.
const presaveDelay = save.RefreshDelay

// presaveNow takes the write lock and stores what a save of the latest
// task would store now, without the checkpoint: the blobs and trees of
// the workspace as it is and the stat-cache records of what it read, in
// one unsynced index commit after the packs are synced, as a save that
// finds nothing new to record does (save.Store.Commit without a
// checkpoint). The changes it covered are then settled, so the save that
// follows reads nothing the presave read and only records the checkpoint:
// an agent's host asks for it after the agent's step, some time after the
// step's last write. It changes nothing a save captures, and a write that
// arrives meanwhile stops it (the write then does the work itself). It
// does nothing while a restore is pending or before the task's first
// checkpoint. It returns false, doing nothing, when a write was heard
// after its moment came.
func (e *Engine) presaveNow(ctx context.Context) bool {
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	if _, due := e.presave.due(); !due {
		return false
	}
	if e.pending != nil {
		return true
	}
	var hashed uint64
	var err error
	gaveWay := false
	e.background.during(ctx, func(run context.Context) {
		if hook := e.opts.hooks.beforePresave; hook != nil {
			hook(run)
		}
		hashed, err = e.presaveLocked(run)
		gaveWay = err != nil && run.Err() != nil
	})
	if err != nil && !gaveWay && ctx.Err() == nil {
		e.backgroundError(err)
	}
	if hook := e.opts.hooks.presaved; hook != nil {
		hook(hashed, err)
	}
	return true
}

// presaveLocked is presaveNow's work, under the write lock; it returns
// the bytes it read and hashed.
func (e *Engine) presaveLocked(ctx context.Context) (uint64, error) {
	defer e.holdReadAhead()()
	task, err := taskName(e.lastTask)
	if err != nil {
		return 0, err
	}
	head, ok, err := e.db.Task(task)
	if err != nil || !ok {
		return 0, err
	}
	parent, err := e.db.Checkpoint(head.Head)
	if err != nil {
		return 0, err
	}
	blobs, err := e.save.NewBatch()
	if err != nil {
		return 0, err
	}
	defer blobs.Close()
	snap, err := e.save.Scan(ctx, blobs, parent.Root, nil, nil)
	if err != nil {
		return 0, err
	}
	if err := e.save.Commit(blobs, snap, nil, task, head); err != nil {
		return 0, err
	}
	hashed := snap.Hashed.Load()
	e.presaved += hashed
	return hashed, nil
}
