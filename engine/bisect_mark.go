package engine

import (
	"context"
	"fmt"
)

// configBisectMark prefixes the store setting holding, per task, the id of
// the first bad checkpoint that task's last bisect found.
const configBisectMark = "bisect.first-bad/"

// BisectMark returns the first bad checkpoint the task's last Bisect that
// found one found ("" is DefaultTask; a bisect left with candidates finds
// none and leaves the mark as it was), and false when none has.
// The mark is an id only: the checkpoint may have been dropped since.
func (e *Engine) BisectMark(ctx context.Context, task string) (ID, bool, error) {
	id, ok, err := e.bisectMark(ctx, task)
	return id, ok, translate(err, e.storeDir)
}

func (e *Engine) bisectMark(ctx context.Context, task string) (ID, bool, error) {
	task, err := taskName(task)
	if err != nil {
		return ID{}, false, err
	}
	if err := ctx.Err(); err != nil {
		return ID{}, false, err
	}
	v, ok, err := e.db.Config(configBisectMark + task)
	if err != nil || !ok {
		return ID{}, false, err
	}
	id, err := ParseID(v)
	if err != nil {
		return ID{}, false, fmt.Errorf("%w: bisect mark of task %s: %v", ErrCorrupt, task, err)
	}
	return id, true, nil
}

// recordBisectMark makes cp the task's bisect mark, replacing the last
// one, in one durable index commit.
func (e *Engine) recordBisectMark(cp CheckpointInfo) error {
	return e.commitConfig("the bisect's first bad checkpoint", configBisectMark+cp.Task, cp.ID.String())
}
