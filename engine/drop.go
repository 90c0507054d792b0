package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/ckpt/ckpt/internal/objects"
)

// DropResult reports what Drop removed.
type DropResult struct {
	Task        string
	Head        objects.ID
	Checkpoints []objects.ID // in sequence order
	// ExclusiveBytes is the pack bytes only the dropped task referenced:
	// what the next GC reclaims (rewrite thresholds permitting).
	ExclusiveBytes int64
}

// Drop removes a task: its head, its sequence numbers and its checkpoints,
// in one durable index commit. Trees and blobs stay until GC sweeps them,
// and content other tasks share is never affected. An unknown task fails
// with ErrUnknownRef. Drop is serialised with the Engine's other writes.
func (e *Engine) Drop(ctx context.Context, task string) (*DropResult, error) {
	start := time.Now()
	unlock, err := e.lockForWrite()
	if err != nil {
		return nil, e.report(err, start)
	}
	defer unlock()
	res, err := e.dropLocked(ctx, task)
	return res, e.report(err, start)
}

func (e *Engine) dropLocked(ctx context.Context, task string) (*DropResult, error) {
	head, ok, err := e.db.Task(task)
	if err != nil {
		return nil, storeError(err, e.storeDir)
	}
	if !ok {
		return nil, fmt.Errorf("%w: task %q does not exist (`ckpt tasks` lists them)", ErrUnknownRef, task)
	}
	g, err := e.loadGraph(ctx, nil, nil)
	if err != nil {
		return nil, storeError(err, e.storeDir)
	}
	res := &DropResult{Task: task, Head: head.Head, ExclusiveBytes: g.exclusiveBytes()[task]}
	b := e.db.NewBatch()
	defer b.Close()
	for _, c := range g.cps {
		if c.cp.Task == task {
			b.DeleteCheckpoint(c.id, task, c.cp.Seq)
			res.Checkpoints = append(res.Checkpoints, c.id)
		}
	}
	b.DeleteTask(task)
	if err := b.Commit(); err != nil {
		return nil, fmt.Errorf("drop task %q: %w", task, err)
	}
	return res, nil
}
