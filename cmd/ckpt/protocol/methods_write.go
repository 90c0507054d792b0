package protocol

import (
	"context"
	"fmt"
	"time"

	"github.com/ckpt/ckpt/engine"
)

// HostDiffJSON is the diff method's result: the CLI's diff --json shape,
// with the bytes of binary sides given too (base64, or text when they
// are valid UTF-8), which the CLI's document leaves null.
type HostDiffJSON = DiffJSON

func (h *host) diff(ctx context.Context, p diffParams) (HostDiffJSON, error) {
	if p.Mode != "" {
		if p.From != "" || p.To != "" {
			return HostDiffJSON{}, UsageError("invalid params: mode takes ref, not from or to")
		}
		p.From, p.To = p.Ref, ""
	} else if p.From == "" {
		p.From = "HEAD"
	}
	defer h.scans.add(ctx)()
	paths, err := pathsParam(p.Paths, p.PathsBase64)
	if err != nil {
		return HostDiffJSON{}, err
	}
	res, err := h.e.Diff(ctx, p.From, p.To, engine.DiffOptions{Task: h.task(p.Task), Paths: paths, Mode: engine.DiffMode(p.Mode), Capture: h.capture.Load()})
	if err != nil {
		return HostDiffJSON{}, err
	}
	// Each change is completed and encoded on the core that loaded it; the
	// JSON-RPC reply is that encoding (jsonrpc.Encoded), not the result
	// encoded again on one core.
	return encodeDiff(res, engine.DiffFormat{}, hostSides(res))
}

// hostSides completes a change of the diff method's result: the bytes of
// its binary sides, unless a side is too large to load.
func hostSides(res *engine.DiffResult) func(engine.Change, *FileJSON) error {
	return func(c engine.Change, f *FileJSON) error {
		if f.TooLarge {
			return nil
		}
		return binarySides(res, c, f)
	}
}

// binarySides fills in the bytes of f's binary sides, which the diff
// view leaves null, as text or base64; a side that does not exist stays
// null.
func binarySides(res *engine.DiffResult, c engine.Change, f *FileJSON) error {
	for _, after := range []bool{false, true} {
		text, b64, exists := &f.Before, &f.BeforeBase64, c.Before != nil
		if after {
			text, b64, exists = &f.After, &f.AfterBase64, c.After != nil
		}
		if !exists || *text != nil || *b64 != nil {
			continue
		}
		b, err := res.Content(c, after)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Path, err)
		}
		*text, *b64 = splitText(b)
	}
	return nil
}

// HostRestoreJSON is the restore method's result: the CLI's restore --json
// shape plus the restored state blob (only=state or both).
type HostRestoreJSON struct {
	RestoreJSON
	SettledJSON
	StateJSON
}

// StateJSON is a state blob inside a JSON document: as text when it is
// UTF-8, else as base64.
type StateJSON struct {
	StateContent       *string `json:"state_content,omitempty"`
	StateContentBase64 *string `json:"state_content_base64,omitempty"`
}

// StateView is state's JSON shape.
func StateView(state []byte) StateJSON {
	var v StateJSON
	v.StateContent, v.StateContentBase64 = splitText(state)
	return v
}

// ConflictData is the error data of a restore that finished with conflicts.
type ConflictData struct {
	Conflicts []ConflictJSON  `json:"conflicts"`
	Restore   HostRestoreJSON `json:"restore"`
}

// restoreConflictError is a restore that finished with conflicts: the
// workspace matches the target except at the conflicting paths.
type restoreConflictError struct{ data ConflictData }

func (e *restoreConflictError) Error() string {
	return fmt.Sprintf("restored %s with %d conflicts", e.data.Restore.Restored, len(e.data.Conflicts))
}

func (h *host) restore(ctx context.Context, p restoreParams) (HostRestoreJSON, error) {
	if err := required("ref", p.Ref); err != nil {
		return HostRestoreJSON{}, err
	}
	paths, err := pathsParam(p.Paths, p.PathsBase64)
	if err != nil {
		return HostRestoreJSON{}, err
	}
	opts := engine.RestoreOptions{Task: h.task(p.Task), Only: engine.Only(p.Only), Paths: paths,
		DryRun: p.DryRun, NoBackup: p.NoBackup, Force: p.Force, Capture: h.capture.Load()}
	defer h.scans.add(ctx)()
	res, err := h.e.Restore(ctx, p.Ref, opts)
	if err != nil {
		return HostRestoreJSON{}, h.events.fail(opts.Task, err)
	}
	h.events.settled(ctx, res.Settled)
	if !p.DryRun {
		h.events.restored(ctx, opts.Task, res)
	}
	out := HostRestoreJSON{RestoreJSON: RestoreView(res, p.DryRun), SettledJSON: SettledView(res.Settled)}
	if (opts.Only == engine.OnlyState || opts.Only == engine.OnlyBoth) && !res.State.IsZero() {
		state, err := h.e.ReadState(ctx, res.State)
		if err != nil {
			return HostRestoreJSON{}, err
		}
		out.StateJSON = StateView(state)
	}
	if len(res.Conflicts) > 0 && !p.DryRun {
		return HostRestoreJSON{}, &restoreConflictError{ConflictData{Conflicts: out.Conflicts, Restore: out}}
	}
	return out, nil
}

func (h *host) gc(ctx context.Context, p gcParams) (GCJSON, error) {
	policy, err := h.e.Retention(ctx)
	if err != nil {
		return GCJSON{}, err
	}
	if p.KeepLast != nil || p.MaxAge != nil || p.MaxSize != nil {
		if p.KeepLast != nil {
			policy.KeepLast = *p.KeepLast
		}
		if p.MaxAge != nil {
			if policy.MaxAge, err = time.ParseDuration(*p.MaxAge); err != nil {
				return GCJSON{}, UsageError(fmt.Sprintf("invalid params: max_age: %v", err))
			}
		}
		if p.MaxSize != nil {
			if policy.MaxSize, err = ParseSize(*p.MaxSize); err != nil {
				return GCJSON{}, err
			}
		}
		if err := h.e.SetRetention(ctx, policy); err != nil {
			return GCJSON{}, err
		}
	}
	res, err := h.e.GC(ctx, engine.GCOptions{Policy: &policy, Progress: phaseReporter(ctx)})
	if err != nil {
		return GCJSON{}, err
	}
	return GCView(res), nil
}

func (h *host) verify(ctx context.Context, p verifyParams) (VerifyJSON, error) {
	rep, err := h.e.Verify(ctx, engine.VerifyOptions{Quick: p.Quick, Progress: phaseReporter(ctx)})
	if rep == nil {
		return VerifyJSON{}, err
	}
	out := VerifyView(rep)
	if err != nil {
		out.Error = &ErrorBody{Code: ExitCode(err), Message: err.Error()}
	}
	return out, nil
}
