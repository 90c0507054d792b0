package engine

import (
	"context"
	"time"

	"github.com/ckpt/ckpt/internal/index"
	"github.com/ckpt/ckpt/internal/objects"
)

// CheckpointInfo is a checkpoint with its id and whether it is the task's head.
type CheckpointInfo struct {
	ID objects.ID
	index.Checkpoint
	Head bool
}

// Log is a task's checkpoints, oldest first.
type Log struct {
	Task        string
	Head        objects.ID // zero when the task has no checkpoints
	Checkpoints []CheckpointInfo
}

// List returns every checkpoint of a task in sequence order, including those
// after the head (left by a restore to an earlier one: restoring them redoes).
// An unknown task has an empty log.
func (e *Engine) List(ctx context.Context, task string) (*Log, error) {
	task = taskOrDefault(task)
	log := &Log{Task: task}
	head, ok, err := e.db.Task(task)
	if err != nil || !ok {
		return log, storeError(err, e.storeDir)
	}
	log.Head = head.Head
	ids, err := e.db.TaskCheckpoints(task)
	if err != nil {
		return nil, storeError(err, e.storeDir)
	}
	log.Checkpoints = make([]CheckpointInfo, 0, len(ids))
	for _, id := range ids {
		cp, err := e.checkpoint(id)
		if err != nil {
			return nil, err
		}
		log.Checkpoints = append(log.Checkpoints, CheckpointInfo{ID: id, Checkpoint: cp, Head: id == head.Head})
	}
	return log, nil
}

// Show resolves ref in task and returns its checkpoint.
func (e *Engine) Show(ctx context.Context, task, ref string) (CheckpointInfo, error) {
	id, cp, err := e.resolveCheckpoint(task, ref)
	if err != nil {
		return CheckpointInfo{}, err
	}
	head, _, err := e.db.Task(cp.Task)
	return CheckpointInfo{ID: id, Checkpoint: cp, Head: head.Head == id}, storeError(err, e.storeDir)
}

// TaskInfo summarises one task.
type TaskInfo struct {
	Name        string
	Head        objects.ID
	Checkpoints int
	First, Last time.Time
	// ExclusiveBytes is the pack bytes only this task's checkpoints
	// reference: what dropping the task and collecting frees.
	ExclusiveBytes int64
}

// Tasks lists every task of the store, sorted by name.
func (e *Engine) Tasks(ctx context.Context) ([]TaskInfo, error) {
	names, err := e.db.Tasks()
	if err != nil {
		return nil, storeError(err, e.storeDir)
	}
	out := make([]TaskInfo, 0, len(names))
	for _, name := range names {
		log, err := e.List(ctx, name)
		if err != nil {
			return nil, err
		}
		ti := TaskInfo{Name: name, Head: log.Head, Checkpoints: len(log.Checkpoints)}
		if n := len(log.Checkpoints); n > 0 {
			ti.First, ti.Last = log.Checkpoints[0].Time, log.Checkpoints[n-1].Time
		}
		out = append(out, ti)
	}
	exclusive, err := e.exclusiveByTask(context.Background())
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].ExclusiveBytes = exclusive[out[i].Name]
	}
	return out, nil
}
