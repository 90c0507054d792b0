package uiengine

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/ckpt/ckpt/diffview"
	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/lossless"
	"github.com/ckpt/ckpt/internal/ui"
)

// Backend serves the page from ckpt's engine. Every call borrows an
// Engine through Acquire and gives it back through the release function, so
// a host that holds one Engine for the page's life and the CLI, which opens
// the store for each request (never holding its lock between requests, so
// an agent's saves are not kept waiting), use the same adapter.
type Backend struct {
	// Acquire returns an Engine for one call; write is true for a restore
	// and for its preview (Plan), a dry run the engine refuses to make on a
	// read-only open.
	Acquire func(ctx context.Context, write bool) (e *engine.Engine, release func(), err error)
	// Events streams checkpoint and restore events (an EventHub's
	// Subscribe, or ui.PollHeads); nil sends none.
	Events func(ctx context.Context) <-chan ui.Event
}

// Subscribe implements ui.Backend.
func (b *Backend) Subscribe(ctx context.Context) <-chan ui.Event {
	if b.Events == nil {
		ch := make(chan ui.Event)
		go func() { <-ctx.Done(); close(ch) }()
		return ch
	}
	return b.Events(ctx)
}

// with runs fn on a borrowed engine.
func (b *Backend) with(ctx context.Context, write bool, fn func(e *engine.Engine) error) error {
	e, release, err := b.Acquire(ctx, write)
	if err != nil {
		return mapErr(err)
	}
	defer release()
	return mapErr(fn(e))
}

// EventHub fans the events of engines opened in this process out to the
// page's subscribers: pass Publish as engine.Options.OnEvent and Subscribe
// as Backend.Events. A subscriber too slow to take an event misses it
// and catches up with the next.
type EventHub struct {
	mu   sync.Mutex
	subs map[chan ui.Event]struct{}
}

// Publish forwards a created checkpoint or a restore to every subscriber.
func (h *EventHub) Publish(ev engine.Event) {
	var out ui.Event
	switch ev.Type {
	case engine.EventCheckpoint:
		if !ev.Created {
			return
		}
		out = ui.Event{Type: ui.EventCheckpoint, Task: ev.Task, ID: ev.ToHash.String()}
	case engine.EventRestore:
		out = ui.Event{Type: ui.EventRestore, Task: ev.Task, ID: ev.Commit.String()}
	default:
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- out:
		default:
		}
	}
}

// Subscribe returns the events published until ctx ends; the channel closes then.
func (h *EventHub) Subscribe(ctx context.Context) <-chan ui.Event {
	ch := make(chan ui.Event, 16)
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[chan ui.Event]struct{}{}
	}
	h.subs[ch] = struct{}{}
	h.mu.Unlock()
	out := make(chan ui.Event)
	go func() {
		defer close(out)
		defer func() {
			h.mu.Lock()
			delete(h.subs, ch)
			h.mu.Unlock()
		}()
		for {
			select {
			case <-ctx.Done():
				return
			case ev := <-ch:
				select {
				case out <- ev:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out
}

func mapErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, engine.ErrUnknownRef):
		return errors.Join(ui.ErrNotFound, err)
	case errors.Is(err, engine.ErrBadRequest):
		return errors.Join(ui.ErrBadRequest, err)
	}
	return err
}

// Tasks implements ui.Backend.
func (b *Backend) Tasks(ctx context.Context) (out []ui.Task, err error) {
	err = b.with(ctx, false, func(e *engine.Engine) error {
		ts, err := e.Tasks(ctx)
		if err != nil {
			return err
		}
		out = make([]ui.Task, 0, len(ts))
		for _, t := range ts {
			task := ui.Task{Name: t.Name, Head: t.Head.String(), Checkpoints: t.Checkpoints, First: t.First, Last: t.Last}
			mark, ok, err := e.BisectMark(ctx, t.Name)
			if err != nil {
				return err
			}
			if ok {
				task.FirstBad = mark.String()
			}
			out = append(out, task)
		}
		return nil
	})
	return out, err
}

func checkpointOf(ci engine.CheckpointInfo) ui.Checkpoint {
	cp := ui.Checkpoint{
		ID: ci.ID.String(), Seq: ci.Seq, Time: ci.Time, Message: ci.Message, Kind: string(ci.Kind),
		Empty: ci.Empty, Head: ci.Head, HasState: !ci.State.IsZero(),
		Files: ci.Stats.Files, Added: ci.Stats.Added, Modified: ci.Stats.Modified, Deleted: ci.Stats.Deleted, Bytes: ci.Stats.BytesHashed,
	}
	if !ci.Parent.IsZero() {
		cp.Parent = ci.Parent.String()
	}
	return cp
}

// Checkpoints implements ui.Backend: one page read newest first from the
// task's sequence keys, costing what it shows whatever q.Before asks.
func (b *Backend) Checkpoints(ctx context.Context, task string, q ui.PageQuery) (p ui.Page, err error) {
	err = b.with(ctx, false, func(e *engine.Engine) error {
		page, more, err := e.ListPage(ctx, task, q.Before, q.Limit)
		if err != nil {
			return err
		}
		for _, ci := range page {
			p.Checkpoints = append(p.Checkpoints, checkpointOf(ci))
		}
		if more {
			p.Next = page[len(page)-1].Seq
		}
		return nil
	})
	return p, err
}

func changeOf(c engine.Change) ui.FileChange {
	fc := ui.FileChange{Path: c.Path, PathBase64: lossless.Base64(c.Path), OldPath: c.OldPath, Status: string(c.Status)}
	if c.OldPath != "" {
		fc.OldPathBase64 = lossless.Base64(c.OldPath)
	}
	if c.Before != nil {
		fc.BeforeSize = c.Before.Size
	}
	if c.After != nil {
		fc.AfterSize = c.After.Size
	}
	return fc
}

// Diff implements ui.Backend.
func (b *Backend) Diff(ctx context.Context, task, from, to string) (out []ui.FileChange, err error) {
	err = b.with(ctx, false, func(e *engine.Engine) error {
		res, err := e.Diff(ctx, from, to, engine.DiffOptions{Task: task})
		if err != nil {
			return err
		}
		out = make([]ui.FileChange, 0, len(res.Changes))
		for _, c := range res.Changes {
			out = append(out, changeOf(c))
		}
		return nil
	})
	return out, err
}

// File implements ui.Backend.
func (b *Backend) File(ctx context.Context, task, from, to, path string) (fc ui.FileContents, err error) {
	if path, err = filePath(path); err != nil {
		return fc, err
	}
	err = b.with(ctx, false, func(e *engine.Engine) error {
		res, err := e.Diff(ctx, from, to, engine.DiffOptions{Task: task, Paths: []string{path}})
		if err != nil {
			return err
		}
		for _, c := range res.Changes {
			if c.Path != path {
				continue
			}
			fc = ui.FileContents{FileChange: changeOf(c)}
			if fc.Before, err = res.Content(c, false); err != nil {
				return err
			}
			fc.After, err = res.Content(c, true)
			return err
		}
		return errors.Join(ui.ErrNotFound, errors.New(path+" did not change"))
	})
	return fc, err
}

// filePath is the file a request names, cleaned by the rule every command
// applies ("src/../b" is "b"), so that it matches the change's name. A path
// that names the workspace itself, or climbs out of it, is a bad request.
func filePath(p string) (string, error) {
	c, err := diffview.CleanPath(p)
	switch {
	case err != nil:
		return "", errors.Join(ui.ErrBadRequest, fmt.Errorf("path %q is outside the workspace", p))
	case c == "":
		return "", errors.Join(ui.ErrBadRequest, errors.New("a file's path is needed, relative to the workspace"))
	}
	return c, nil
}

// History implements ui.Backend.
func (b *Backend) History(ctx context.Context, task, path string) (out []ui.HistoryEntry, err error) {
	if path, err = filePath(path); err != nil {
		return nil, err
	}
	err = b.with(ctx, false, func(e *engine.Engine) error {
		h, err := e.History(ctx, engine.HistoryOptions{Task: task, Paths: []string{path}})
		if err != nil {
			return err
		}
		out = make([]ui.HistoryEntry, 0, len(h.Entries))
		for _, en := range h.Entries {
			for _, c := range en.Diff.Changes {
				if c.Path == path {
					out = append(out, ui.HistoryEntry{Checkpoint: checkpointOf(en.Checkpoint), Change: changeOf(c)})
					break
				}
			}
		}
		return nil
	})
	return out, err
}

func restoreOptions(req ui.RestoreRequest, dry bool) engine.RestoreOptions {
	return engine.RestoreOptions{Task: req.Task, Only: engine.Only(req.Only), Paths: req.Paths, DryRun: dry}
}

// Plan implements ui.Backend: a dry run of the restore.
func (b *Backend) Plan(ctx context.Context, req ui.RestoreRequest) (p ui.RestorePlan, err error) {
	err = b.with(ctx, true, func(e *engine.Engine) error {
		res, err := e.Restore(ctx, req.Ref, restoreOptions(req, true))
		if err != nil {
			return err
		}
		p = ui.RestorePlan{Write: res.Written, WriteBase64: lossless.Base64List(res.Written),
			Delete: res.Deleted, DeleteBase64: lossless.Base64List(res.Deleted), Conflicts: conflictsOf(res.Conflicts),
			Backup: req.Only != ui.OnlyState, State: req.Only == ui.OnlyState || req.Only == ui.OnlyBoth}
		return nil
	})
	return p, err
}

// Restore implements ui.Backend.
func (b *Backend) Restore(ctx context.Context, req ui.RestoreRequest) (out ui.RestoreResult, err error) {
	err = b.with(ctx, true, func(e *engine.Engine) error {
		res, err := e.Restore(ctx, req.Ref, restoreOptions(req, false))
		if err != nil {
			return err
		}
		out = ui.RestoreResult{Restored: res.Restored.String(), Written: res.Written, WrittenBase64: lossless.Base64List(res.Written),
			Deleted: res.Deleted, DeletedBase64: lossless.Base64List(res.Deleted), Conflicts: conflictsOf(res.Conflicts)}
		if !res.Backup.IsZero() {
			out.Backup = res.Backup.String()
		}
		return nil
	})
	return out, err
}

// conflictsOf is the page's shape of a restore's conflicts.
func conflictsOf(cs []engine.Conflict) []ui.Conflict {
	var out []ui.Conflict
	for _, c := range cs {
		out = append(out, ui.Conflict{Path: c.Path, PathBase64: lossless.Base64(c.Path), Reason: c.Reason})
	}
	return out
}
