package ui

import (
	"context"
	"errors"
	"strconv"
	"sync"

	"github.com/ckpt/ckpt/engine"
)

// engineBackend adapts today's engine to Backend, so the tests run against
// a real store. Events come from the engine's OnEvent hook (saves in the
// test go through the same engine).
type engineBackend struct {
	e   *engine.Engine
	hub *hub
}

// hub fans engine events out to subscribers.
type hub struct {
	mu   sync.Mutex
	subs map[chan Event]struct{}
}

func newHub() *hub { return &hub{subs: map[chan Event]struct{}{}} }

func (h *hub) publish(ev engine.Event) {
	var out Event
	switch ev.Type {
	case engine.EventCheckpoint:
		if !ev.Created {
			return
		}
		out = Event{Type: EventCheckpoint, Task: ev.Task, ID: ev.ToHash.String()}
	case engine.EventRestore:
		out = Event{Type: EventRestore, Task: ev.Task, ID: ev.Commit.String()}
	default:
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- out:
		default: // a slow page misses an event and catches up on the next
		}
	}
}

func (b *engineBackend) Subscribe(ctx context.Context) <-chan Event {
	ch := make(chan Event, 16)
	b.hub.mu.Lock()
	b.hub.subs[ch] = struct{}{}
	b.hub.mu.Unlock()
	out := make(chan Event)
	go func() {
		defer close(out)
		defer func() {
			b.hub.mu.Lock()
			delete(b.hub.subs, ch)
			b.hub.mu.Unlock()
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
		return errors.Join(ErrNotFound, err)
	case errors.Is(err, engine.ErrBadRequest):
		return errors.Join(ErrBadRequest, err)
	}
	return err
}

func (b *engineBackend) Tasks(ctx context.Context) ([]Task, error) {
	ts, err := b.e.Tasks(ctx)
	if err != nil {
		return nil, mapErr(err)
	}
	out := make([]Task, 0, len(ts))
	for _, t := range ts {
		out = append(out, Task{Name: t.Name, Head: t.Head.String(), Checkpoints: t.Checkpoints, First: t.First, Last: t.Last})
	}
	return out, nil
}

func checkpointOf(ci engine.CheckpointInfo) Checkpoint {
	cp := Checkpoint{
		ID: ci.ID.String(), Seq: ci.Seq, Time: ci.Time, Message: ci.Message, Kind: string(ci.Kind),
		Empty: ci.Empty, Head: ci.Head, HasState: !ci.State.IsZero(),
		Files: ci.Stats.Files, Added: ci.Stats.Added, Modified: ci.Stats.Modified, Deleted: ci.Stats.Deleted, Bytes: ci.Stats.BytesHashed,
	}
	if !ci.Parent.IsZero() {
		cp.Parent = ci.Parent.String()
	}
	return cp
}

// Checkpoints walks sequence numbers down from the newest (the head or a
// later checkpoint left by a restore), one lookup per checkpoint returned.
func (b *engineBackend) Checkpoints(ctx context.Context, task string, q PageQuery) (Page, error) {
	top := q.Before
	if top == 0 {
		head, err := b.e.Show(ctx, task, "HEAD")
		if errors.Is(err, engine.ErrUnknownRef) {
			return Page{}, nil
		} else if err != nil {
			return Page{}, mapErr(err)
		}
		top = head.Seq + 1
		for {
			if _, err := b.e.Show(ctx, task, "@"+itoa(top)); err != nil {
				break
			}
			top++
		}
	}
	var p Page
	seq := top - 1
	for ; seq >= 1 && len(p.Checkpoints) < q.Limit; seq-- {
		ci, err := b.e.Show(ctx, task, "@"+itoa(seq))
		if errors.Is(err, engine.ErrUnknownRef) {
			continue // dropped by gc
		} else if err != nil {
			return Page{}, mapErr(err)
		}
		p.Checkpoints = append(p.Checkpoints, checkpointOf(ci))
	}
	if seq >= 1 {
		p.Next = seq + 1
	}
	return p, nil
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

func changeOf(c engine.Change) FileChange {
	fc := FileChange{Path: c.Path, OldPath: c.OldPath, Status: string(c.Status)}
	if c.Before != nil {
		fc.BeforeSize = c.Before.Size
	}
	if c.After != nil {
		fc.AfterSize = c.After.Size
	}
	return fc
}

func (b *engineBackend) Diff(ctx context.Context, task, from, to string) ([]FileChange, error) {
	res, err := b.e.Diff(ctx, from, to, engine.DiffOptions{Task: task})
	if err != nil {
		return nil, mapErr(err)
	}
	out := make([]FileChange, 0, len(res.Changes))
	for _, c := range res.Changes {
		out = append(out, changeOf(c))
	}
	return out, nil
}

func (b *engineBackend) File(ctx context.Context, task, from, to, path string) (FileContents, error) {
	res, err := b.e.Diff(ctx, from, to, engine.DiffOptions{Task: task, Paths: []string{path}})
	if err != nil {
		return FileContents{}, mapErr(err)
	}
	for _, c := range res.Changes {
		if c.Path != path {
			continue
		}
		fc := FileContents{FileChange: changeOf(c)}
		if fc.Before, err = res.Content(c, false); err != nil {
			return FileContents{}, err
		}
		if fc.After, err = res.Content(c, true); err != nil {
			return FileContents{}, err
		}
		return fc, nil
	}
	return FileContents{}, errors.Join(ErrNotFound, errors.New(path+" did not change"))
}

func restoreOptions(req RestoreRequest, dry bool) engine.RestoreOptions {
	return engine.RestoreOptions{Task: req.Task, Only: engine.Only(req.Only), Paths: req.Paths, DryRun: dry}
}

func (b *engineBackend) Plan(ctx context.Context, req RestoreRequest) (RestorePlan, error) {
	res, err := b.e.Restore(ctx, req.Ref, restoreOptions(req, true))
	if err != nil {
		return RestorePlan{}, mapErr(err)
	}
	p := RestorePlan{Write: res.Written, Delete: res.Deleted, Backup: req.Only != OnlyState, State: req.Only == OnlyState || req.Only == OnlyBoth}
	for _, c := range res.Conflicts {
		p.Conflicts = append(p.Conflicts, Conflict{Path: c.Path, Reason: c.Reason})
	}
	return p, nil
}

func (b *engineBackend) Restore(ctx context.Context, req RestoreRequest) (RestoreResult, error) {
	res, err := b.e.Restore(ctx, req.Ref, restoreOptions(req, false))
	if err != nil {
		return RestoreResult{}, mapErr(err)
	}
	out := RestoreResult{Restored: res.Restored.String(), Written: res.Written, Deleted: res.Deleted}
	if !res.Backup.IsZero() {
		out.Backup = res.Backup.String()
	}
	for _, c := range res.Conflicts {
		out.Conflicts = append(out.Conflicts, Conflict{Path: c.Path, Reason: c.Reason})
	}
	return out, nil
}
