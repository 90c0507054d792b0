package remotesync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/ckpt/ckpt/engine/remote"
	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/objects"
)

// ErrNoTask is wrapped by the error of a push of a task the store does not
// have, or a pull of one the remote does not have.
var ErrNoTask = errors.New("no such task")

// PushResult says what a push did.
type PushResult struct {
	// Task is the task the remote now holds this store's history under:
	// the task pushed, or the fork it was copied to (Forked).
	Task string
	Head objects.ID
	// Checkpoints is the number of checkpoints uploaded.
	Checkpoints int
	// UpToDate: the remote had everything already; Behind: the remote
	// holds checkpoints of the task this store lacks and this store holds
	// none the remote lacks, so there was nothing to push.
	UpToDate, Behind bool
	// Forked names the task the store's history was copied to and pushed
	// as, when the remote's task had forked from it; "" otherwise.
	Forked string
}

// maxHeadRaces bounds how often a push starts over because another pusher
// moved the head between its read and its conditional write.
const maxHeadRaces = 8

// Push uploads what the remote lacks of task: its data, then a segment,
// then the head, in that order (doc.go). A push that loses a race for the
// head reads it again and starts over; one that finds the remote's task
// forked pushes a copy of the local task under a new name and says so.
func (s *Syncer) Push(ctx context.Context, task string) (PushResult, error) {
	for range maxHeadRaces {
		res, err := s.pushOnce(ctx, task, true)
		if errors.Is(err, remote.ErrPrecondition) {
			continue
		}
		return res, err
	}
	return PushResult{}, fmt.Errorf("push %q: the remote head kept moving (%d attempts): %w", task, maxHeadRaces, remote.ErrPrecondition)
}

// localTask is what the store holds of one task.
type localTask struct {
	head   index.TaskHead
	ids    []objects.ID // checkpoints in seq order
	tipSeq uint64
	tip    objects.ID
}

func (s *Syncer) loadTask(task string) (localTask, error) {
	var lt localTask
	h, ok, err := s.DB.Task(task)
	if err != nil {
		return lt, err
	}
	if !ok {
		return lt, fmt.Errorf("%w: %q", ErrNoTask, task)
	}
	lt.head = h
	if lt.ids, err = s.DB.TaskCheckpoints(task); err != nil {
		return lt, err
	}
	if len(lt.ids) == 0 {
		return lt, fmt.Errorf("%w: %q has no checkpoints", ErrNoTask, task)
	}
	lt.tip = lt.ids[len(lt.ids)-1]
	cp, err := s.DB.Checkpoint(lt.tip)
	if err != nil {
		return lt, err
	}
	lt.tipSeq = cp.Seq
	return lt, nil
}

// holds reports whether the store's task holds every checkpoint of the
// remote head h: the checkpoint at h's tip sequence number is h's tip.
func (s *Syncer) holds(task string, h Head, lt localTask) (bool, error) {
	id, ok, err := s.DB.CheckpointAt(task, h.TipSeq)
	if err != nil || (ok && id == h.tipID()) {
		return ok, err
	}
	// A tip the record knows was pushed or pulled by this store, so its
	// task descends from it even if a local gc dropped it since.
	_, known, err := s.recordedSegment(h.tipID())
	return known && lt.tipSeq >= h.TipSeq, err
}

// remoteHolds reports whether the remote task of head h holds checkpoint id.
func (s *Syncer) remoteHolds(ctx context.Context, h Head, id objects.ID) (bool, error) {
	seg, ok, err := s.recordedSegment(id)
	if err != nil || (ok && slices.Contains(h.Segments, seg)) {
		return ok, err
	}
	for _, name := range h.Segments {
		if _, known, err := s.DB.Config(s.segKey(name)); err != nil || known {
			if err != nil {
				return false, err
			}
			continue
		}
		sg, err := s.readSegment(ctx, name)
		if err != nil {
			return false, err
		}
		for _, c := range sg.Checkpoints {
			if index.CheckpointID(c) == id {
				return true, nil
			}
		}
	}
	return false, nil
}

func (s *Syncer) pushOnce(ctx context.Context, task string, mayFork bool) (PushResult, error) {
	res := PushResult{Task: task}
	lt, err := s.loadTask(task)
	if err != nil {
		return res, err
	}
	res.Head = lt.head.Head
	h, etag, found, err := s.readHead(ctx, task)
	if err != nil {
		return res, err
	}
	if found {
		ok, err := s.holds(task, h, lt)
		if err != nil {
			return res, err
		}
		if !ok {
			return s.pushDiverged(ctx, task, h, lt, mayFork)
		}
	}
	newCps, oldSegs, err := s.unpushed(ctx, lt, h)
	if err != nil {
		return res, err
	}
	if found && len(newCps) == 0 && h.headID() == lt.head.Head && h.LastSeq == lt.head.LastSeq {
		res.UpToDate = true
		return res, nil
	}
	segs := slices.Clone(h.Segments)
	for _, sg := range oldSegs {
		if !slices.Contains(segs, sg) {
			segs = append(segs, sg)
		}
	}
	if len(newCps) > 0 {
		seg, err := s.pushCheckpoints(ctx, newCps, lt)
		if err != nil {
			return res, err
		}
		if !slices.Contains(segs, seg) {
			segs = append(segs, seg)
		}
	}
	res.Checkpoints = len(newCps)
	next := Head{Task: task, Head: lt.head.Head.String(), LastSeq: lt.head.LastSeq, TipSeq: lt.tipSeq,
		Tip: lt.tip.String(), Segments: segs, Gen: h.Gen + 1}
	s.progress("head", 0, 1)
	return res, s.writeHead(ctx, next, etag, found)
}

// pushDiverged handles a remote head the store's task does not hold: the
// store is behind (nothing to push), or the task forked and the store's
// history goes up as its fork (fork.go).
func (s *Syncer) pushDiverged(ctx context.Context, task string, h Head, lt localTask, mayFork bool) (PushResult, error) {
	res := PushResult{Task: task, Head: lt.head.Head}
	behind, err := s.remoteHolds(ctx, h, lt.tip)
	if err != nil {
		return res, err
	}
	if behind {
		res.Behind = true
		return res, nil
	}
	if !mayFork {
		return res, fmt.Errorf("push %q: the remote's task forked from this store's too", task)
	}
	fork, err := s.forkOf(task, lt)
	if err != nil {
		return res, err
	}
	res, err = s.pushOnce(ctx, fork, false)
	res.Forked = fork
	return res, err
}

// unpushed splits the task's checkpoints into those the remote lacks and
// the segments holding the others. A checkpoint the record places in a
// segment the head does not name (a push cut short before its head) counts
// as pushed only if the segment is still there.
func (s *Syncer) unpushed(ctx context.Context, lt localTask, h Head) (newCps []objects.ID, oldSegs []string, err error) {
	checked := map[string]bool{}
	for _, seg := range h.Segments {
		checked[seg] = true
	}
	for _, id := range lt.ids {
		seg, ok, err := s.recordedSegment(id)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			there, seen := checked[seg]
			if !seen {
				segID, perr := objects.ParseID(seg)
				if there, err = s.exists(ctx, metaKey(segID)); perr != nil || err != nil {
					return nil, nil, errors.Join(perr, err)
				}
				checked[seg] = there
			}
			if there {
				oldSegs = append(oldSegs, seg)
				continue
			}
		}
		newCps = append(newCps, id)
	}
	return newCps, oldSegs, nil
}

// writeHead replaces the remote head (or creates it) conditionally on the
// version read, and records its generation as seen.
func (s *Syncer) writeHead(ctx context.Context, h Head, etag string, found bool) error {
	b, err := encodeHead(h)
	if err != nil {
		return err
	}
	cond := remote.IfAbsent()
	if found {
		cond = remote.IfMatch(etag)
	}
	atomic.AddInt64(&s.counters.Puts, 1)
	if _, err := s.Backend.Put(ctx, s.headKey(h.Task), bytes.NewReader(b), int64(len(b)), cond); err != nil {
		return fmt.Errorf("write head of task %q: %w", h.Task, err)
	}
	return s.markSeen(h.Task, h.Gen)
}
