package remotesync

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ckpt/ckpt/engine/remote"
	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/objects"
)

// gcMarkKey holds the objects a remote gc found unreferenced, with when
// it first found each: only a later gc, at least the grace period after,
// deletes one, and only if it is still unreferenced then. A push that
// relies on an object it checked before the mark publishes its head well
// within the grace period, so no head ever names a deleted object.
const gcMarkKey = "gc/marked"

// GCPolicy selects what a remote gc drops: per task, checkpoints beyond
// the KeepLast highest sequence numbers and those older than MaxAge (never
// the head); zero values keep everything. Grace is how long an
// unreferenced object stays marked before it is deleted.
type GCPolicy struct {
	KeepLast int
	MaxAge   time.Duration
	Grace    time.Duration
	Now      time.Time
}

// GCResult says what a remote gc did.
type GCResult struct {
	Tasks        int   // heads found
	Dropped      int   // checkpoints dropped from heads
	Marked       int   // unreferenced objects marked for a later gc
	Deleted      int   // objects deleted
	DeletedBytes int64 // their size
}

// GC applies p to every task on the remote, then deletes what no head
// references and was marked unreferenced at least p.Grace ago, and marks
// what is newly unreferenced. A task whose head moves meanwhile is left
// for the next gc.
func (s *Syncer) GC(ctx context.Context, p GCPolicy) (GCResult, error) {
	var res GCResult
	heads, err := s.listObjects(ctx, "heads/")
	if err != nil {
		return res, err
	}
	live := map[string]bool{}
	for _, hk := range heads {
		h, etag, err := s.readHeadKey(ctx, hk.Key)
		if err != nil {
			return res, err
		}
		res.Tasks++
		segs, dropped, err := s.retain(ctx, h, etag, p)
		if err != nil {
			return res, err
		}
		res.Dropped += dropped
		for name, seg := range segs {
			live[metaKey(mustID(name))] = true
			for _, l := range seg.Locs {
				live[dataKey(l.Loc.Object)] = true
			}
		}
	}
	return res, s.sweep(ctx, live, p, &res)
}

// listObjects lists every object under prefix.
func (s *Syncer) listObjects(ctx context.Context, prefix string) ([]remote.ObjectInfo, error) {
	var all []remote.ObjectInfo
	after := ""
	for {
		page, err := s.Backend.List(ctx, prefix, after, 0)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", prefix, err)
		}
		all = append(all, page.Objects...)
		if page.Next == "" {
			return all, nil
		}
		after = page.Next
	}
}

// readHeadKey reads the head at key, whatever its task.
func (s *Syncer) readHeadKey(ctx context.Context, key string) (Head, string, error) {
	atomic.AddInt64(&s.counters.Gets, 1)
	rc, info, err := s.Backend.Get(ctx, key)
	if err != nil {
		return Head{}, "", fmt.Errorf("read %s: %w", key, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, 64<<20))
	if err != nil {
		return Head{}, "", fmt.Errorf("read %s: %w", key, err)
	}
	var named struct{ Task string }
	if json.Unmarshal(b, &named) != nil || s.headKey(named.Task) != key {
		return Head{}, "", &CorruptError{Key: key, Reason: "head does not decode or names another task"}
	}
	h, err := decodeHead(key, named.Task, b)
	if err != nil {
		return h, "", err
	}
	return h, info.ETag, s.checkSeen(key, named.Task, h.Gen)
}

// retain drops the checkpoints p selects from head h, replacing its
// segments by one holding what is kept, and returns the segments the
// (possibly new) head names.
func (s *Syncer) retain(ctx context.Context, h Head, etag string, p GCPolicy) (map[string]*segment, int, error) {
	segs := map[string]*segment{}
	for _, name := range h.Segments {
		seg, err := s.readSegment(ctx, name)
		if err != nil {
			return nil, 0, err
		}
		segs[name] = seg
	}
	keep, dropped := keptCheckpoints(segs, h, p)
	if dropped == 0 {
		return segs, 0, nil
	}
	stored, err := compactSegment(segs, keep)
	if err != nil {
		return nil, 0, err
	}
	name := s.sum(stored)
	if _, err := s.putImmutable(ctx, metaKey(name), stored); err != nil {
		return nil, 0, err
	}
	next := h
	next.Segments, next.Gen = []string{name.String()}, h.Gen+1
	if err := s.writeHead(ctx, next, etag, true); errors.Is(err, remote.ErrPrecondition) {
		return segs, 0, nil // a push moved the head: its segments stay live; the next gc retries
	} else if err != nil {
		return nil, 0, err
	}
	if err := s.recordCompaction(segs, name.String()); err != nil {
		return nil, 0, err
	}
	seg, err := decodeSegment(metaKey(name), stored)
	return map[string]*segment{name.String(): seg}, dropped, err
}

// keptCheckpoints returns the checkpoints of h's segments that p keeps,
// in seq order, and how many it drops.
func keptCheckpoints(segs map[string]*segment, h Head, p GCPolicy) ([]index.Checkpoint, int) {
	var all []index.Checkpoint
	for _, seg := range segs {
		all = append(all, seg.Checkpoints...)
	}
	slices.SortFunc(all, func(a, b index.Checkpoint) int { return cmp.Compare(a.Seq, b.Seq) })
	head := h.headID()
	var keep []index.Checkpoint
	for i, cp := range all {
		old := p.MaxAge > 0 && cp.Time.Before(p.Now.Add(-p.MaxAge))
		beyond := p.KeepLast > 0 && len(all)-i > p.KeepLast
		if (old || beyond) && index.CheckpointID(cp) != head {
			continue
		}
		keep = append(keep, cp)
	}
	return keep, len(all) - len(keep)
}

// compactSegment encodes one segment holding keep, the trees they reach,
// and the locators of the blobs those trees and states reference plus
// every locator no tree or state references (the chunks of chunked
// files, whose lists only the data holds).
func compactSegment(segs map[string]*segment, keep []index.Checkpoint) ([]byte, error) {
	trees := map[objects.ID]objects.Tree{}
	referenced := map[objects.ID]bool{}
	for _, seg := range segs {
		for _, t := range seg.Trees {
			id, err := index.TreeID(t)
			if err != nil {
				return nil, err
			}
			trees[id] = t
			for _, e := range t.Entries {
				referenced[e.ID] = true
			}
		}
		for _, cp := range seg.Checkpoints {
			referenced[cp.State] = true
		}
	}
	var treeEnc, cpEnc [][]byte
	need := map[objects.ID]bool{}
	seen := map[objects.ID]bool{}
	for _, cp := range keep {
		cpEnc = append(cpEnc, index.EncodeCheckpoint(cp))
		need[cp.State] = true
		stack := []objects.ID{cp.Root}
		for len(stack) > 0 {
			id := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[id] {
				continue
			}
			seen[id] = true
			t, ok := trees[id]
			if !ok {
				return nil, fmt.Errorf("remote gc: tree %s of a kept checkpoint is in no segment", id.Short())
			}
			enc, err := index.EncodeTree(t)
			if err != nil {
				return nil, err
			}
			treeEnc = append(treeEnc, enc)
			for _, e := range t.Entries {
				if e.Kind == objects.KindDir {
					stack = append(stack, e.ID)
				} else {
					need[e.ID] = true
				}
			}
		}
	}
	var locs []blobLoc
	done := map[objects.ID]bool{}
	for _, seg := range segs {
		for _, l := range seg.Locs {
			if !done[l.ID] && (need[l.ID] || !referenced[l.ID]) {
				done[l.ID] = true
				locs = append(locs, l)
			}
		}
	}
	slices.SortFunc(locs, func(a, b blobLoc) int { return strings.Compare(a.ID.String(), b.ID.String()) })
	return encodeSegment(treeEnc, cpEnc, locs)
}

// recordCompaction points the local record of every checkpoint of the old
// segments at the new one: those kept are there, and those dropped must
// not be pushed again.
func (s *Syncer) recordCompaction(old map[string]*segment, name string) error {
	b := s.DB.NewBatch()
	defer b.Close()
	for _, seg := range old {
		for _, cp := range seg.Checkpoints {
			b.SetConfig(s.cpKey(index.CheckpointID(cp)), name)
		}
	}
	b.SetConfig(s.segKey(name), "")
	return b.Commit()
}

// sweep deletes the data objects and segments outside live that an
// earlier gc marked at least p.Grace ago, and marks the rest.
func (s *Syncer) sweep(ctx context.Context, live map[string]bool, p GCPolicy, res *GCResult) error {
	marked := map[string]time.Time{}
	if b, err := s.getObject(ctx, gcMarkKey); err == nil {
		if err := json.Unmarshal(b, &marked); err != nil {
			marked = map[string]time.Time{} // a damaged mark only delays deletion
		}
	} else if !errors.Is(err, remote.ErrNotFound) {
		return err
	}
	next := map[string]time.Time{}
	for _, prefix := range []string{"data/", "meta/"} {
		objs, err := s.listObjects(ctx, prefix)
		if err != nil {
			return err
		}
		for _, o := range objs {
			if live[o.Key] {
				continue
			}
			at, ok := marked[o.Key]
			if !ok || p.Now.Sub(at) < p.Grace {
				if !ok {
					at = p.Now
					res.Marked++
				}
				next[o.Key] = at
				continue
			}
			if err := s.Backend.Delete(ctx, o.Key); err != nil {
				return fmt.Errorf("delete %s: %w", o.Key, err)
			}
			res.Deleted++
			res.DeletedBytes += o.Size
		}
	}
	b, err := json.Marshal(next)
	if err != nil {
		return err
	}
	atomic.AddInt64(&s.counters.Puts, 1)
	_, err = s.Backend.Put(ctx, gcMarkKey, strings.NewReader(string(b)), int64(len(b)), remote.Condition{})
	return err
}
