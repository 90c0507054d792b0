package engine

import (
	"context"
	"fmt"
	"time"
)

// DropResult reports what Drop removed.
type DropResult struct {
	Task        string
	Head        ID
	Checkpoints []ID // in sequence order
	// ExclusiveBytes is the pack bytes only the dropped task referenced:
	// what the next GC reclaims (rewrite thresholds permitting).
	ExclusiveBytes int64
}

// Drop removes a task: its head, its sequence numbers and its checkpoints,
// in one durable index commit. Trees and blobs stay until GC sweeps them,
// and content other tasks share is never affected. An unknown task fails
// with ErrUnknownRef, an invalid name with ErrBadRequest. Drop is
// serialised with the Engine's other writes.
func (e *Engine) Drop(ctx context.Context, task string) (*DropResult, error) {
	start := time.Now()
	if task == "" {
		return nil, e.report(fmt.Errorf("%w: no task named", ErrBadRequest), start)
	}
	unlock, _, err := e.beginWrite(ctx)
	if err != nil {
		return nil, e.report(err, start)
	}
	defer unlock()
	res, err := e.dropLocked(ctx, task)
	return res, e.report(err, start)
}

func (e *Engine) dropLocked(ctx context.Context, task string) (*DropResult, error) {
	task, err := taskName(task)
	if err != nil {
		return nil, err
	}
	head, ok, err := e.db.Task(task)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: task %q does not exist", ErrUnknownRef, task)
	}
	listed, exclusive, err := e.maintStore().TaskShare(ctx, task)
	if err != nil {
		return nil, err
	}
	res := &DropResult{Task: task, Head: ID(head.Head), ExclusiveBytes: exclusive}
	b := e.db.NewBatch()
	defer b.Close()
	for _, c := range listed {
		b.DeleteCheckpoint(c.ID, task, c.Seq)
		res.Checkpoints = append(res.Checkpoints, ID(c.ID))
	}
	b.DeleteTask(task)
	if err := b.Commit(); err != nil {
		return nil, fmt.Errorf("drop task %q: %w", task, err)
	}
	return res, nil
}
