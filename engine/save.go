package engine

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/ckpt/ckpt/engine/internal/save"
	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/objects"
	"github.com/ckpt/ckpt/walker"
)

// SaveOptions describe one checkpoint.
type SaveOptions struct {
	Task       string // default DefaultTask
	Message    string
	AllowEmpty bool              // create a checkpoint even when nothing changed
	Meta       map[string]string // host metadata, stored verbatim
	State      io.Reader         // the host's state blob (e.g. its conversation); nil = none
	// Roots, in a multi-root workspace, names the roots to read (none: all);
	// the others keep their files as the task's head holds them (a task's
	// first checkpoint reads every root). A name that is not a root is
	// ErrBadRequest.
	Roots []string
	// Capture, when set, is what the save captures instead of the
	// Engine's Options (see Capture).
	Capture *Capture
}

// SaveResult describes what Save did.
type SaveResult struct {
	ID      ID
	Parent  ID
	Task    string
	Seq     uint64
	Created bool // false: nothing changed, ID is the unchanged head
	Empty   bool // the checkpoint's files equal its parent's
	Kind    CheckpointKind
	Stats   Stats
	// Skipped are the paths the save left out, sorted by path; a watched
	// engine reports the ones a cold save would, in directories it did not
	// list again too.
	Skipped []Skipped
	// Settled is the interrupted restore this save settled before it
	// scanned (see SettleRestore), nil when there was none.
	Settled *SettledRestore
}

// saved is what saveLocked did, in the index's terms.
type saved struct {
	id, parent objects.ID
	task       string
	seq        uint64
	created    bool
	empty      bool
	kind       index.CheckpointKind
	stats      index.Stats
	skipped    []walker.Skipped
	kept       map[string]bool // the unreadable paths of skipped the checkpoint keeps
}

func (s *saved) public() *SaveResult {
	return &SaveResult{ID: ID(s.id), Parent: ID(s.parent), Task: s.task, Seq: s.seq, Created: s.created,
		Empty: s.empty, Kind: publicKind(s.kind), Stats: publicStats(s.stats), Skipped: publicSkipped(s.skipped, s.kept)}
}

// Save checkpoints the workspace into a task. It reads only files whose stat
// changed since the last save, stores new content once, and makes the
// checkpoint visible in one synced index commit after the pack data is
// durable: a crash at any point leaves either the old head or the new one.
// With nothing changed and AllowEmpty unset, no checkpoint is created and the
// result carries the current head with Created=false.
func (e *Engine) Save(ctx context.Context, opts SaveOptions) (*SaveResult, error) {
	start := time.Now()
	if err := opts.Capture.check(); err != nil { // before settling anything
		return nil, e.report(err, start)
	}
	unlock, settled, err := e.beginWrite(ctx)
	if err != nil {
		return nil, e.report(err, start)
	}
	defer unlock()
	sv, _, err := e.saveLocked(ctx, opts, index.KindSave)
	if err != nil {
		return nil, e.report(err, start)
	}
	e.maybeAutoGC(ctx)
	res := sv.public()
	res.Settled = settled
	e.emit(Event{Type: EventCheckpoint, Task: res.Task, Created: res.Created,
		FromHash: res.Parent, ToHash: res.ID, Duration: time.Since(start)})
	if res.Created {
		e.autoPushSaved(res.Task)
	}
	return res, nil
}

// saveLocked is Save without the lock and events; it also returns the
// snapshot it took, which Restore needs as the current state.
func (e *Engine) saveLocked(ctx context.Context, opts SaveOptions, kind index.CheckpointKind) (*saved, *save.Snapshot, error) {
	start := time.Now()
	defer e.holdReadAhead()()
	task, err := taskName(opts.Task)
	if err != nil {
		return nil, nil, err
	}
	e.lastTask = task
	if err := e.places.checkRootFilter(opts.Roots); err != nil {
		return nil, nil, err
	}
	head, hasHead, err := e.db.Task(task)
	if err != nil {
		return nil, nil, err
	}
	var parent index.Checkpoint
	if hasHead {
		if parent, err = e.db.Checkpoint(head.Head); err != nil {
			return nil, nil, err
		}
	}
	st, err := e.saveStore(opts.Capture)
	if err != nil {
		return nil, nil, err
	}
	blobs, err := st.NewBatch()
	if err != nil {
		return nil, nil, err
	}
	defer blobs.Close()
	snap, err := e.scanRoots(ctx, st, blobs, parent.Root, opts.Roots)
	if err != nil {
		return nil, nil, err
	}
	if err := e.pauseAt(ctx, pauseSaveScanned); err != nil {
		return nil, nil, err
	}
	state := parent.State // a backup keeps the state of the head it backs up
	if kind == index.KindSave {
		state = objects.ID{}
	}
	if opts.State != nil {
		if state, _, err = blobs.Put(opts.State); err != nil {
			return nil, nil, fmt.Errorf("store state blob: %w", err)
		}
	}
	res := &saved{task: task, kind: kind, skipped: snap.Skipped, parent: head.Head}
	if res.kept, err = keptPaths(st.TreeSource(snap), snap.Root, snap.Skipped); err != nil {
		return nil, nil, err
	}
	// The presaves' reading (under the Engine's rules) was this save's.
	own := st == e.save
	hashed := snap.Hashed.Load()
	if own {
		hashed += e.presaved
	}
	empty := hasHead && snap.Root == parent.Root
	// Without a state blob only the files decide whether anything changed.
	unchanged := empty && (opts.State == nil || state == parent.State)
	held, heldCP := head.Head, parent // the checkpoint that holds what this one would
	if !unchanged && kind == index.KindBackup && hasHead {
		// A backup is of the workspace as it is: where a checkpoint of the
		// task holds it already (a pull moved the head past the files),
		// that one is the backup, and the task's sequence, which a
		// remote shares, gains none.
		if held, heldCP, unchanged, err = e.checkpointHolding(task, snap.Root, state); err != nil {
			return nil, nil, err
		}
	}
	if unchanged && !opts.AllowEmpty {
		// Nothing to record but refreshed stat-cache entries.
		res.id, res.seq, res.parent = held, heldCP.Seq, heldCP.Parent
		res.stats = index.Stats{Files: filesIn(snap, heldCP, index.Stats{}), BytesHashed: hashed, DurationMs: uint64(time.Since(start).Milliseconds())}
		if held != head.Head {
			err = st.Keep(blobs, snap) // it stands for a new checkpoint
		} else {
			err = st.Commit(blobs, snap, nil, task, head)
		}
		if err != nil {
			return nil, nil, err
		}
		if own {
			e.presaved = 0
		}
		return res, snap, nil
	}
	stats, err := st.ChangeStats(ctx, snap, parent.Root)
	if err != nil {
		return nil, nil, err
	}
	stats.Files, stats.BytesHashed = filesIn(snap, parent, stats), hashed
	stats.DurationMs = uint64(time.Since(start).Milliseconds())
	cp := &index.Checkpoint{
		Parent: head.Head, Task: task, Seq: head.LastSeq + 1, Root: snap.Root,
		Time: e.opts.now().UTC(), Message: opts.Message, Kind: kind, Empty: empty,
		Stats: stats, Meta: opts.Meta, State: state,
	}
	if err := st.Commit(blobs, snap, cp, task, head); err != nil {
		return nil, nil, err
	}
	if own {
		e.presaved = 0
	}
	res.id, res.seq, res.created, res.empty, res.stats = index.CheckpointID(*cp), cp.Seq, true, empty, stats
	return res, snap, nil
}

// filesIn is the number of files in snap's tree. A partial scan did not
// list every file, so the count is the parent's adjusted by the changes.
func filesIn(snap *save.Snapshot, parent index.Checkpoint, changes index.Stats) uint64 {
	if !snap.Partial() {
		return snap.Files.Load()
	}
	return parent.Stats.Files + changes.Added - changes.Deleted
}

// checkpointHolding returns the newest of task's recent checkpoints
// whose files are root and whose state is state; ok is false when there
// is none. The checkpoint a backup finds is a recent one (the head a pull
// moved past, an edit reverted by hand); a long task's older ones are not
// read. Only a checkpoint the retention policy keeps as long as it would
// keep a backup made now can stand for one: among the newest KeepLast,
// younger than half of MaxAge, and none under MaxSize (which drops the
// oldest checkpoints first).
func (e *Engine) checkpointHolding(task string, root, state objects.ID) (id objects.ID, cp index.Checkpoint, ok bool, err error) {
	policy, err := e.retention()
	if err != nil || policy.MaxSize > 0 {
		return id, cp, false, err
	}
	limit := heldSearch
	if policy.KeepLast > 0 {
		limit = min(limit, policy.KeepLast)
	}
	recent, _, err := e.db.CheckpointsBefore(task, 0, limit)
	if err != nil {
		return id, cp, false, err
	}
	for _, r := range recent {
		if cp, err = e.db.Checkpoint(r.ID); err != nil {
			return id, cp, false, err
		}
		if policy.MaxAge > 0 && e.opts.now().Sub(cp.Time) > policy.MaxAge/2 {
			continue // a pulled checkpoint's time is another machine's: seq and time need not agree
		}
		if cp.Root == root && cp.State == state {
			return r.ID, cp, true, nil
		}
	}
	return id, index.Checkpoint{}, false, nil
}

// heldSearch bounds checkpointHolding's search.
const heldSearch = 64
