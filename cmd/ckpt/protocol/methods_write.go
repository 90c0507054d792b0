package protocol

import (
	"context"
	"encoding/base64"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/ckpt/ckpt/engine"
)

// HostDiffJSON is the diff method's result: the CLI's diff --json shape with
// every side's bytes kept (text, or base64 when not valid UTF-8).
type HostDiffJSON struct {
	From  string         `json:"from"`
	To    string         `json:"to"`
	Files []HostFileJSON `json:"files"`
}

type HostFileJSON struct {
	FileJSON
	BeforeBase64 *string `json:"before_base64,omitempty"`
	AfterBase64  *string `json:"after_base64,omitempty"`
}

func (h *host) diff(ctx context.Context, p diffParams) (HostDiffJSON, error) {
	if p.Mode != "" {
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
	view, err := DiffView(res, engine.DiffFormat{})
	if err != nil {
		return HostDiffJSON{}, err
	}
	out := HostDiffJSON{From: view.From, To: view.To, Files: make([]HostFileJSON, len(view.Files))}
	for i, f := range view.Files {
		hf := HostFileJSON{FileJSON: f}
		if !f.TooLarge {
			if hf.Before, hf.BeforeBase64, err = sideContent(res, res.Changes[i], false, f.Before); err != nil {
				return HostDiffJSON{}, err
			}
			if hf.After, hf.AfterBase64, err = sideContent(res, res.Changes[i], true, f.After); err != nil {
				return HostDiffJSON{}, err
			}
		}
		out.Files[i] = hf
	}
	return out, nil
}

// sideContent is one side's bytes as text or base64; both nil when the side
// does not exist. described is the side as the diff's view holds it (a
// text side's bytes, nil for a binary one): only a binary side is read
// again.
func sideContent(res *engine.DiffResult, c engine.Change, after bool, described *string) (text, b64 *string, err error) {
	switch {
	case (after && c.After == nil) || (!after && c.Before == nil):
		return nil, nil, nil
	case described != nil && utf8.ValidString(*described):
		return described, nil, nil
	case described != nil:
		s := base64.StdEncoding.EncodeToString([]byte(*described))
		return nil, &s, nil
	}
	b, err := res.Content(c, after)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", c.Path, err)
	}
	text, b64 = splitText(b)
	return text, b64, nil
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
