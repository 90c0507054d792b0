package engine

import (
	"context"
	"time"
)

// Log is a task's checkpoints, oldest first.
type Log struct {
	Task        string
	Head        ID // zero when the task has no checkpoints
	Checkpoints []CheckpointInfo
}

// List returns every checkpoint of a task in sequence order, including those
// after the head (left by a restore to an earlier one: restoring them redoes).
// An unknown task has an empty log; an invalid name fails with ErrBadRequest.
func (e *Engine) List(ctx context.Context, task string) (*Log, error) {
	log, err := e.list(ctx, task)
	return log, translate(err, e.storeDir)
}

func (e *Engine) list(ctx context.Context, task string) (*Log, error) {
	task, err := taskName(task)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	log := &Log{Task: task}
	head, ok, err := e.db.Task(task)
	if err != nil || !ok {
		return log, err
	}
	log.Head = ID(head.Head)
	ids, err := e.db.TaskCheckpoints(task)
	if err != nil {
		return nil, err
	}
	log.Checkpoints = make([]CheckpointInfo, 0, len(ids))
	for _, id := range ids {
		cp, err := e.checkpoint(id)
		if err != nil {
			return nil, err
		}
		log.Checkpoints = append(log.Checkpoints, checkpointInfo(ID(id), cp, id == head.Head))
	}
	return log, nil
}

// ListPage returns up to limit (at least 1) of a task's checkpoints whose
// sequence number is below before (0: from the newest, the head or a later
// checkpoint a restore left), newest first, and whether older ones remain.
// A page costs what it returns, however large before is and whatever gaps
// gc left below it. An unknown task has an empty page.
func (e *Engine) ListPage(ctx context.Context, task string, before uint64, limit int) ([]CheckpointInfo, bool, error) {
	page, more, err := e.listPage(ctx, task, before, max(limit, 1))
	return page, more, translate(err, e.storeDir)
}

func (e *Engine) listPage(ctx context.Context, task string, before uint64, limit int) ([]CheckpointInfo, bool, error) {
	task, err := taskName(task)
	if err != nil {
		return nil, false, err
	}
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	head, _, err := e.db.Task(task)
	if err != nil {
		return nil, false, err
	}
	ids, more, err := e.db.CheckpointsBefore(task, before, limit)
	if err != nil {
		return nil, false, err
	}
	out := make([]CheckpointInfo, 0, len(ids))
	for _, s := range ids {
		cp, err := e.checkpoint(s.ID)
		if err != nil {
			return nil, false, err
		}
		out = append(out, checkpointInfo(ID(s.ID), cp, s.ID == head.Head))
	}
	return out, more, nil
}

// Show resolves ref in task and returns its checkpoint.
func (e *Engine) Show(ctx context.Context, task, ref string) (CheckpointInfo, error) {
	if err := ctx.Err(); err != nil {
		return CheckpointInfo{}, err
	}
	id, cp, err := e.resolveCheckpoint(task, ref)
	if err != nil {
		return CheckpointInfo{}, translate(err, e.storeDir)
	}
	head, _, err := e.db.Task(cp.Task)
	return checkpointInfo(ID(id), cp, head.Head == id), translate(err, e.storeDir)
}

// TaskInfo summarises one task.
type TaskInfo struct {
	Name        string
	Head        ID
	Checkpoints int
	First, Last time.Time
	// ExclusiveBytes is the pack bytes only this task's checkpoints
	// reference: what dropping the task and collecting frees.
	ExclusiveBytes int64
}

// Tasks lists every task of the store, sorted by name.
func (e *Engine) Tasks(ctx context.Context) ([]TaskInfo, error) {
	out, err := e.tasks(ctx)
	return out, translate(err, e.storeDir)
}

func (e *Engine) tasks(ctx context.Context) ([]TaskInfo, error) {
	names, err := e.db.Tasks()
	if err != nil {
		return nil, err
	}
	out := make([]TaskInfo, 0, len(names))
	for _, name := range names {
		log, err := e.list(ctx, name)
		if err != nil {
			return nil, err
		}
		ti := TaskInfo{Name: name, Head: log.Head, Checkpoints: len(log.Checkpoints)}
		if n := len(log.Checkpoints); n > 0 {
			ti.First, ti.Last = log.Checkpoints[0].Time, log.Checkpoints[n-1].Time
		}
		out = append(out, ti)
	}
	exclusive, err := e.exclusiveByTask(ctx)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].ExclusiveBytes = exclusive[out[i].Name]
	}
	return out, nil
}
