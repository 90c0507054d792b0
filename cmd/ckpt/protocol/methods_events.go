package protocol

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/jsonrpc"
	"github.com/ckpt/ckpt/internal/lossless"
)

// The events a host receives as notifications, in the shapes Roo Code's
// checkpoint service emits (camelCase, durations in milliseconds), each
// naming its task.
type (
	InitializeEvent struct {
		WorkspaceDir string `json:"workspaceDir"` // a multi-root workspace's identity (see roots)
		// WorkspaceDirBase64 is workspaceDir's bytes when its name is not
		// valid UTF-8 (package lossless).
		WorkspaceDirBase64 *string       `json:"workspaceDir_base64,omitempty"`
		Roots              []engine.Root `json:"roots,omitempty"` // the roots of a multi-root workspace, each {name, dir}
		BaseHash           string        `json:"baseHash"`        // the task's first checkpoint
		Created            bool          `json:"created"`         // the task began with this operation
		Duration           int64         `json:"duration"`
		Task               string        `json:"task"`
	}
	CheckpointEvent struct {
		FromHash string `json:"fromHash"` // the previous head; "" for a task's first
		ToHash   string `json:"toHash"`
		Duration int64  `json:"duration"`
		Task     string `json:"task"`
	}
	RestoreEvent struct {
		CommitHash string `json:"commitHash"`
		Duration   int64  `json:"duration"`
		Task       string `json:"task"`
	}
	ErrorEvent struct {
		Error string `json:"error"`
		Task  string `json:"task"`
	}
	WarningEvent struct {
		Message string `json:"message"`
		Task    string `json:"task"`
	}
)

// taskEvents sends a session's events: initialize once per task, before
// that task's first checkpoint or restore event; checkpoint only when a
// save created one; restore after each restore that changed something;
// error when a save or restore fails.
type taskEvents struct {
	e      *engine.Engine
	notify func(string, any) // nil: no events
	mu     sync.Mutex
	inited map[string]bool
}

func newTaskEvents(e *engine.Engine, notify func(string, any)) *taskEvents {
	return &taskEvents{e: e, notify: notify, inited: map[string]bool{}}
}

// initialize sends the task's initialize event unless it was sent already.
func (t *taskEvents) initialize(ctx context.Context, task string, created bool, d time.Duration) {
	t.mu.Lock() // held while sending, so no event of the task can precede it
	defer t.mu.Unlock()
	if t.inited[task] {
		return
	}
	t.inited[task] = true
	ws := t.e.Workspace()
	ev := InitializeEvent{WorkspaceDir: ws, WorkspaceDirBase64: lossless.Base64(ws), Roots: t.e.Roots(), Created: created, Duration: durationMs(d), Task: task}
	if log, err := t.e.List(ctx, task); err == nil && len(log.Checkpoints) > 0 {
		ev.BaseHash = log.Checkpoints[0].ID.String()
	}
	t.notify("initialize", ev)
}

// saved sends the events of a successful save.
func (t *taskEvents) saved(ctx context.Context, res *engine.SaveResult, d time.Duration) {
	if t.notify == nil {
		return
	}
	t.initialize(ctx, res.Task, res.Created && res.Parent.IsZero(), d)
	if res.Created {
		t.notify("checkpoint", CheckpointEvent{FromHash: res.Parent.Text(), ToHash: res.ID.String(), Duration: durationMs(d), Task: res.Task})
	}
}

// restored sends the events of a restore that was carried out.
func (t *taskEvents) restored(ctx context.Context, task string, res *engine.RestoreResult) {
	if t.notify == nil {
		return
	}
	t.initialize(ctx, task, false, res.Duration)
	t.notify("restore", RestoreEvent{CommitHash: res.Restored.String(), Duration: durationMs(res.Duration), Task: task})
}

// settled sends the events of an interrupted restore an operation settled
// first: a restore event when it was completed, a warning when its journal
// was discarded.
func (t *taskEvents) settled(ctx context.Context, s *engine.SettledRestore) {
	switch {
	case t.notify == nil || s == nil:
	case s.Completed != nil:
		t.restored(ctx, s.Journal.Task, s.Completed)
	default:
		t.notify("warning", WarningEvent{Task: s.Journal.Task,
			Message: fmt.Sprintf("discarded an interrupted restore to %s without replaying it: %s", s.Journal.Target.Short(), s.Discarded)})
	}
}

// fail sends an error event for a failed save or restore and returns err;
// none for one its caller asked for wrongly (a usage mistake, an unknown
// ref) or cancelled before it changed anything, which only the caller's
// answer reports: the task's other clients have nothing to hear of it,
// and a host that shows the event as its error would show a cancellation
// the user asked for. A restore cancelled part way (its journal keeps it
// pending) is told.
func (t *taskEvents) fail(task string, err error) error {
	interrupted := (*engine.InterruptedRestoreError)(nil)
	if kind := errorKind(err); kind == "usage" || kind == "unknown_ref" || errors.Is(err, context.Canceled) && !errors.As(err, &interrupted) {
		return err
	}
	if t.notify != nil {
		t.notify("error", ErrorEvent{Error: Message(err), Task: task})
	}
	return err
}

// ScanHub passes the engine's scan progress (one callback per engine) to
// the requests running a scan, as $/progress for those that asked.
type ScanHub struct {
	mu   sync.Mutex
	ctxs map[*context.Context]struct{}
}

// add makes the engine's scan progress reach ctx's request until the
// returned function is called.
func (h *ScanHub) add(ctx context.Context) func() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ctxs == nil {
		h.ctxs = map[*context.Context]struct{}{}
	}
	key := &ctx
	h.ctxs[key] = struct{}{}
	return func() {
		h.mu.Lock()
		delete(h.ctxs, key)
		h.mu.Unlock()
	}
}

// scanValue is the $/progress value of a scan.
type scanValue struct {
	Phase       string `json:"phase"`
	Files       uint64 `json:"files"`
	BytesHashed uint64 `json:"bytes_hashed"`
	ElapsedMs   int64  `json:"elapsed_ms"`
}

// Send reports p to every request registered.
func (h *ScanHub) Send(p engine.ScanProgress) {
	h.mu.Lock()
	ctxs := make([]context.Context, 0, len(h.ctxs))
	for k := range h.ctxs {
		ctxs = append(ctxs, *k)
	}
	h.mu.Unlock()
	for _, ctx := range ctxs {
		reportProgress(ctx, scanValue{Phase: "scan", Files: p.Files, BytesHashed: p.BytesHashed, ElapsedMs: p.Elapsed.Milliseconds()})
	}
}

// phaseValue is the $/progress value of gc's and verify's phases.
type phaseValue struct {
	Phase string `json:"phase"`
	Done  int64  `json:"done"`
	Total int64  `json:"total,omitempty"`
}

// phaseReporter sends gc's or verify's phases as progress of ctx's request.
func phaseReporter(ctx context.Context) func(engine.PhaseProgress) {
	return func(p engine.PhaseProgress) {
		reportProgress(ctx, phaseValue{Phase: p.Phase, Done: p.Done, Total: p.Total})
	}
}

// reporterKey is the context key of a request's progress reporter.
type reporterKey struct{}

// withReporter makes reportProgress on ctx call fn (MCP requests).
func withReporter(ctx context.Context, fn func(any)) context.Context {
	return context.WithValue(ctx, reporterKey{}, fn)
}

// reportProgress sends v as the progress of ctx's request: through its
// reporter when it has one, else as JSON-RPC $/progress (sent only when the
// request carried a progress token).
func reportProgress(ctx context.Context, v any) {
	if fn, ok := ctx.Value(reporterKey{}).(func(any)); ok {
		fn(v)
		return
	}
	_ = jsonrpc.Progress(ctx, v)
}
