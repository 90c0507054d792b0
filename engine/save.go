package engine

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/ckpt/ckpt/internal/diffview"
	"github.com/ckpt/ckpt/internal/index"
	"github.com/ckpt/ckpt/internal/objects"
	"github.com/ckpt/ckpt/internal/walker"
)

// SaveOptions describe one checkpoint.
type SaveOptions struct {
	Task       string // default DefaultTask
	Message    string
	AllowEmpty bool              // create a checkpoint even when nothing changed
	Meta       map[string]string // host metadata, stored verbatim
	State      io.Reader         // the host's state blob (e.g. its conversation); nil = none
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
	Skipped []Skipped
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
}

func (s *saved) public() *SaveResult {
	return &SaveResult{ID: ID(s.id), Parent: ID(s.parent), Task: s.task, Seq: s.seq, Created: s.created,
		Empty: s.empty, Kind: publicKind(s.kind), Stats: publicStats(s.stats), Skipped: publicSkipped(s.skipped)}
}

// Save checkpoints the workspace into a task. It reads only files whose stat
// changed since the last save, stores new content once, and makes the
// checkpoint visible in one synced index commit after the pack data is
// durable: a crash at any point leaves either the old head or the new one.
// With nothing changed and AllowEmpty unset, no checkpoint is created and the
// result carries the current head with Created=false.
func (e *Engine) Save(ctx context.Context, opts SaveOptions) (*SaveResult, error) {
	start := time.Now()
	unlock, err := e.lockForWrite()
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
	e.emit(Event{Type: EventCheckpoint, Task: res.Task, Created: res.Created,
		FromHash: res.Parent, ToHash: res.ID, Duration: time.Since(start)})
	return res, nil
}

// saveLocked is Save without the lock and events; it also returns the
// snapshot it took, which Restore needs as the current state.
func (e *Engine) saveLocked(ctx context.Context, opts SaveOptions, kind index.CheckpointKind) (*saved, *snapshot, error) {
	start := time.Now()
	task, err := taskName(opts.Task)
	if err != nil {
		return nil, nil, err
	}
	head, hasHead, err := e.db.Task(task)
	if err != nil {
		return nil, nil, storeError(err, e.storeDir)
	}
	var parent index.Checkpoint
	if hasHead {
		if parent, err = e.db.Checkpoint(head.Head); err != nil {
			return nil, nil, storeError(err, e.storeDir)
		}
	}
	blobs, err := e.newBlobBatch()
	if err != nil {
		return nil, nil, err
	}
	defer blobs.Close()
	snap, err := e.scan(ctx, blobs)
	if err != nil {
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
	res := &saved{task: task, kind: kind, skipped: snap.skipped, parent: head.Head}
	empty := hasHead && snap.root == parent.Root
	// Without a state blob only the files decide whether anything changed.
	unchanged := empty && (opts.State == nil || state == parent.State)
	if unchanged && !opts.AllowEmpty {
		// Nothing to record but refreshed stat-cache entries.
		res.id, res.seq, res.parent = head.Head, parent.Seq, parent.Parent
		res.stats = index.Stats{Files: snap.files.Load(), BytesHashed: snap.hashed.Load(), DurationMs: uint64(time.Since(start).Milliseconds())}
		return res, snap, e.commitSnapshot(blobs, snap, nil, task, head)
	}
	stats, err := e.changeStats(ctx, snap, parent.Root)
	if err != nil {
		return nil, nil, err
	}
	stats.Files, stats.BytesHashed = snap.files.Load(), snap.hashed.Load()
	stats.DurationMs = uint64(time.Since(start).Milliseconds())
	cp := &index.Checkpoint{
		Parent: head.Head, Task: task, Seq: head.LastSeq + 1, Root: snap.root,
		Time: e.opts.now().UTC(), Message: opts.Message, Kind: kind, Empty: empty,
		Stats: stats, Meta: opts.Meta, State: state,
	}
	if err := e.commitSnapshot(blobs, snap, cp, task, head); err != nil {
		return nil, nil, err
	}
	res.id, res.seq, res.created, res.empty, res.stats = index.CheckpointID(*cp), cp.Seq, true, empty, stats
	return res, snap, nil
}

// newBlobBatch starts the blob batch of a save: a fresh one (no index lookup
// per blob) when the store holds no blob yet.
func (e *Engine) newBlobBatch() (*objects.Batch, error) {
	has, err := e.db.HasLocators()
	if err != nil {
		return nil, storeError(err, e.storeDir)
	}
	if !has {
		return e.blobs.NewFreshBatch(), nil
	}
	return e.blobs.NewBatch(), nil
}

// commitSnapshot makes a save durable: pack data first (fsynced by Sync),
// then one synced index batch with the locators, the trees and stat cache
// not yet flushed by the scan and, when cp is set, the checkpoint and the
// task's new head. Only this batch makes anything visible: what the scan
// flushed earlier is unreferenced until it commits.
func (e *Engine) commitSnapshot(blobs *objects.Batch, snap *snapshot, cp *index.Checkpoint, task string, head index.TaskHead) error {
	return e.writeIndex(blobs, snap.trees, snap.caches, snap.goneDirs, func(b *index.Batch) error {
		if cp == nil {
			return nil
		}
		id, err := b.PutCheckpoint(*cp)
		if err != nil {
			return err
		}
		b.SetTaskHead(task, index.TaskHead{Head: id, LastSeq: max(head.LastSeq, cp.Seq)})
		return nil
	})
}

// writeIndex syncs the packs, then commits one index batch with the new
// locators, trees and stat-cache changes, plus whatever last adds. The
// order makes every committed locator point at durable pack bytes and every
// committed stat-cache record name committed blobs and trees.
func (e *Engine) writeIndex(blobs *objects.Batch, trees map[objects.ID]index.Tree, caches map[string]index.DirCache,
	goneDirs []string, last func(b *index.Batch) error) error {
	placements, err := blobs.Sync()
	if err != nil {
		return fmt.Errorf("write packs: %w", err)
	}
	b := e.db.NewBatch()
	defer b.Close()
	for _, p := range placements {
		b.PutLocator(p.ID, p.Loc)
	}
	for _, t := range trees {
		if _, err := b.PutTree(t); err != nil {
			return err
		}
	}
	for dir, dc := range caches {
		b.PutDirCache(dir, dc)
	}
	for _, dir := range goneDirs {
		b.DeleteDirCacheTree(dir)
	}
	if err := last(b); err != nil {
		return err
	}
	if err := b.Commit(); err != nil {
		return fmt.Errorf("commit index: %w", err)
	}
	return nil
}

// changeStats counts the files added, modified and deleted since base.
func (e *Engine) changeStats(ctx context.Context, snap *snapshot, base objects.ID) (index.Stats, error) {
	var st index.Stats
	if base.IsZero() { // a task's first checkpoint: everything is new, no need to list it
		st.Added = snap.files.Load()
		return st, nil
	}
	changes, err := diffview.Compare(ctx, e.treeSource(snap), base, snap.root, nil)
	if err != nil {
		return st, storeError(err, e.storeDir)
	}
	for _, c := range changes {
		switch c.Status {
		case diffview.StatusAdded:
			st.Added++
		case diffview.StatusDeleted:
			st.Deleted++
		default:
			st.Modified++
		}
	}
	return st, nil
}

// layeredTrees serves trees computed by a scan first, then the index.
type layeredTrees struct {
	fresh map[objects.ID]index.Tree
	db    *index.DB
}

func (l layeredTrees) Tree(id objects.ID) (index.Tree, error) {
	if t, ok := l.fresh[id]; ok {
		return t, nil
	}
	return l.db.Tree(id)
}

// treeSource returns a source that sees snap's trees (nil snap: the index only).
func (e *Engine) treeSource(snap *snapshot) diffview.TreeSource {
	l := layeredTrees{db: e.db}
	if snap != nil {
		l.fresh = snap.trees
	}
	return l
}
