package remotesync

import (
	"context"
	"errors"
	"fmt"

	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/objects"
)

// ErrDiverged is wrapped by *DivergedError.
var ErrDiverged = errors.New("task forked")

// DivergedError reports a pull that found the remote's task and the
// store's own holding different checkpoints under one sequence number:
// both saved after their last sync. Nothing was imported.
type DivergedError struct {
	Task   string
	Seq    uint64
	Local  objects.ID
	Remote objects.ID
}

func (e *DivergedError) Error() string {
	return fmt.Sprintf("task %q forked: checkpoint @%d is %s here and %s on the remote",
		e.Task, e.Seq, e.Local.Short(), e.Remote.Short())
}

// Unwrap returns ErrDiverged.
func (e *DivergedError) Unwrap() error { return ErrDiverged }

// PullResult says what a pull did.
type PullResult struct {
	Task        string
	Head        objects.ID // the store's head of the task after the pull
	Checkpoints int        // checkpoints imported
	Trees       int        // trees imported
	Blobs       int        // blob locators recorded (the blobs stay on the remote)
	Moved       bool       // the store's head moved to the remote's
}

// imported is one segment read by a pull.
type imported struct {
	name string
	seg  *segment
}

// Pull imports task's metadata from the remote: every checkpoint and tree
// the store lacks, and where each blob lives on the remote (blobs are
// fetched later, by Fetch, when something needs them). It moves the
// store's head to the remote's when the remote has saved further; a
// task that forked is a *DivergedError and changes nothing. Everything is
// verified before one index commit makes it visible.
func (s *Syncer) Pull(ctx context.Context, task string) (PullResult, error) {
	res := PullResult{Task: task}
	h, _, found, err := s.readHead(ctx, task)
	if err != nil {
		return res, err
	}
	if !found {
		// A remote with no task at all is most often a wrong URL.
		if page, err := s.Backend.List(ctx, "heads/", "", 1); err == nil && len(page.Objects) == 0 {
			return res, fmt.Errorf("%w: the remote holds no task at all (a wrong address, or nothing pushed there yet)", ErrNoTask)
		}
		return res, fmt.Errorf("%w: the remote has no task %q", ErrNoTask, task)
	}
	local, hasLocal, err := s.DB.Task(task)
	if err != nil {
		return res, err
	}
	var segs []imported
	for i, name := range h.Segments {
		// The record's word that a segment was imported holds only while
		// the task is here: after a drop, everything comes again.
		if _, known, err := s.DB.Config(s.segKey(name)); err != nil || (known && hasLocal) {
			if err != nil {
				return res, err
			}
			continue
		}
		s.progress("import", int64(i), int64(len(h.Segments)))
		seg, err := s.readSegment(ctx, name)
		if err != nil {
			return res, err
		}
		if err := s.checkImport(task, metaKey(mustID(name)), seg); err != nil {
			return res, err
		}
		segs = append(segs, imported{name, seg})
	}
	b := s.DB.NewBatch()
	defer b.Close()
	known := map[objects.ID]bool{}
	for _, im := range segs {
		for _, t := range im.seg.Trees {
			if _, err := b.PutTree(t); err != nil {
				return res, &CorruptError{Key: metaKey(mustID(im.name)), Reason: "invalid tree", Err: err}
			}
			res.Trees++
		}
		for _, cp := range im.seg.Checkpoints {
			id, err := b.PutCheckpoint(cp)
			if err != nil {
				return res, &CorruptError{Key: metaKey(mustID(im.name)), Reason: "invalid checkpoint", Err: err}
			}
			known[id] = true
			b.SetConfig(s.cpKey(id), im.name)
			res.Checkpoints++
		}
		for _, l := range im.seg.Locs {
			b.SetConfig(s.blobKey(l.ID), string(appendLoc(nil, l.Loc)))
			res.Blobs++
		}
		b.SetConfig(s.segKey(im.name), "")
	}
	res.Head = local.Head
	if !hasLocal || h.LastSeq > local.LastSeq {
		head := h.headID()
		if _, err := s.DB.Checkpoint(head); err != nil && !known[head] {
			return res, &CorruptError{Key: s.headKey(task), Reason: "head names a checkpoint none of its segments holds"}
		}
		b.SetTaskHead(task, index.TaskHead{Head: head, LastSeq: h.LastSeq})
		res.Head, res.Moved = head, true
	}
	return res, b.Commit()
}

// checkImport refuses a segment holding checkpoints of another task, and
// reports a fork when one of its checkpoints takes a sequence number that
// a different local checkpoint of the task holds.
func (s *Syncer) checkImport(task, key string, seg *segment) error {
	for _, cp := range seg.Checkpoints {
		if cp.Task != task {
			return &CorruptError{Key: key, Reason: fmt.Sprintf("segment of task %q holds a checkpoint of task %q", task, cp.Task)}
		}
		mine, ok, err := s.DB.CheckpointAt(task, cp.Seq)
		if err != nil {
			return err
		}
		if theirs := index.CheckpointID(cp); ok && mine != theirs {
			return &DivergedError{Task: task, Seq: cp.Seq, Local: mine, Remote: theirs}
		}
	}
	return nil
}

// mustID parses a segment name a decoded head has already checked.
func mustID(hex string) objects.ID {
	id, _ := objects.ParseID(hex)
	return id
}
