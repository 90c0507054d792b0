package maint

import (
	"context"

	"github.com/ckpt/ckpt/objects"
)

// Listed is a checkpoint as a task lists it.
type Listed struct {
	ID  objects.ID
	Seq uint64
}

// TaskShare lists the checkpoints of task, in sequence order, and the
// bytes of the records only they reference.
func (s *Store) TaskShare(ctx context.Context, task string) ([]Listed, int64, error) {
	g, err := s.Load(ctx, nil, nil)
	if err != nil {
		return nil, 0, err
	}
	var ids []Listed
	for _, c := range g.cps {
		if c.cp.Task == task {
			ids = append(ids, Listed{c.id, c.cp.Seq})
		}
	}
	return ids, g.ExclusiveBytes()[task], nil
}

// ExclusiveByTask returns the bytes of the records only each task references.
func (s *Store) ExclusiveByTask(ctx context.Context) (map[string]int64, error) {
	g, err := s.Load(ctx, nil, nil)
	if err != nil {
		return nil, err
	}
	return g.ExclusiveBytes(), nil
}
