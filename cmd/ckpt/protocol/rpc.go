package protocol

import (
	"context"
	"errors"
	"io"

	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/jsonrpc"
)

// ErrorData is the data of an error serve and mcp report: the CLI's exit
// code and a kind a host can switch on (busy, unknown_ref, usage, refused,
// corrupt, conflict, error), never to be parsed from the message.
type ErrorData struct {
	ExitCode  int              `json:"exit_code"`
	Kind      string           `json:"kind"`
	Conflicts []ConflictJSON   `json:"conflicts,omitempty"` // kind conflict
	Restore   *HostRestoreJSON `json:"restore,omitempty"`   // kind conflict: what the restore did
}

// errorKind names the class of err.
func errorKind(err error) string {
	var usage UsageError
	switch {
	case errors.Is(err, engine.ErrUnknownRef):
		return "unknown_ref"
	case errors.As(err, &usage), errors.Is(err, engine.ErrBadRequest):
		return "usage"
	case errors.Is(err, engine.ErrBusy):
		return "busy"
	case errors.Is(err, engine.ErrProtected), errors.Is(err, engine.ErrWorkspaceMismatch), errors.Is(err, engine.ErrStoreHoldsWorkspace):
		return "refused"
	case errors.Is(err, engine.ErrCorrupt):
		return "corrupt"
	case errors.Is(err, engine.ErrNoBisection):
		return "no_bisection"
	}
	return "error"
}

// MapError turns a method's error into the JSON-RPC error sent: usage
// mistakes are Invalid Params, the rest application errors (-32000).
func MapError(err error) *jsonrpc.Error {
	var (
		conflict *restoreConflictError
		remote   *RemoteError
		params   *jsonrpc.ParamsError
	)
	if errors.As(err, &params) {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: params.Error(), Data: ErrorData{ExitCode: ExitUsage, Kind: "usage"}}
	}
	if errors.As(err, &remote) {
		return &jsonrpc.Error{Code: remote.Code, Message: remote.Message, Data: remote.Data}
	}
	if errors.As(err, &conflict) {
		return &jsonrpc.Error{Code: jsonrpc.CodeServerError, Message: err.Error(), Data: ErrorData{ExitCode: ExitConflicts,
			Kind: "conflict", Conflicts: conflict.data.Conflicts, Restore: &conflict.data.Restore}}
	}
	kind, code := errorKind(err), jsonrpc.CodeServerError
	if kind == "usage" {
		code = jsonrpc.CodeInvalidParams
	}
	return &jsonrpc.Error{Code: code, Message: Message(err), Data: ErrorData{ExitCode: ExitCode(err), Kind: kind}}
}

// closableInput returns a reader of r whose Close makes a blocked Read
// return at once, so serve and mcp stop on a signal while idle on stdin.
// The goroutine copying r stays blocked in r's Read until r ends or the
// process exits (a read of a terminal or pipe cannot be interrupted).
func closableInput(r io.Reader) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		_, err := io.Copy(pw, r)
		pw.CloseWithError(err) // nil: EOF
	}()
	return pr
}

// ServeJSONRPC answers JSON-RPC requests read from r, one per line, on w
// until r ends or ctx is cancelled; the events (of its requests, and
// s.Store's) go to w as notifications.
func ServeJSONRPC(ctx context.Context, e *engine.Engine, s Session, r io.Reader, w io.Writer) error {
	var conn *jsonrpc.Conn
	notify := func(method string, params any) { _ = conn.Notify(method, params) }
	srv, err := jsonrpc.NewServer(jsonrpc.Options{MapError: MapError}, Routes(e, s, notify)...)
	if err != nil {
		return err
	}
	conn = srv.NewConn(closableInput(r), w)
	defer s.Store.add(notify)()
	return conn.Serve(ctx)
}
