package protocol

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ckpt/ckpt/internal/cmdwire"
	"github.com/ckpt/ckpt/internal/jsonrpc"
)

// ErrServerGone ends an attached MCP server whose resident server went
// away.
var ErrServerGone = errors.New("the store's server went away")

// ErrNotAttached is the error of a client whose server ended the
// connection before it answered attach (it stopped as the client reached
// it): nothing of the client's ran there, and the client may look for the
// store's next server or serve the store itself.
var ErrNotAttached = errors.New("the store's server ended the connection before it attached the client")

// ErrAttachUnanswered is the error of a client whose server took its
// connection but did not answer attach in the time it was given: it is
// stopped or stuck, and holds the store.
var ErrAttachUnanswered = errors.New("the store's server did not answer attach in time")

// ServeMCPAttached answers MCP requests read from r on w (the stdio
// transport; version is ckpt's release, told to the client) with the tools
// of NewMCPServer, but through the store's resident server on conn (see
// Resident) instead of an engine of its own: it attaches with attach,
// runs each tool call as that method's request on the server, progress
// and cancellation included, and sends the events of its tasks as log
// messages. It returns when r ends or ctx is cancelled, and ErrServerGone
// when the server goes away first. A refused attach is returned as a
// *RemoteError, one the server never answered as ErrNotAttached (before
// anything of r was read), and one it did not answer by attachBy (unless
// zero; see cmdwire.CloseUnanswered) as ErrAttachUnanswered, with conn
// closed.
func ServeMCPAttached(ctx context.Context, conn io.ReadWriteCloser, attach AttachParams, attachBy time.Time, version string, r io.Reader, w io.Writer) error {
	srv := newMCPServer(version)
	notify := mcpNotifier(srv)
	c := jsonrpc.NewClient(conn, func(method string, params json.RawMessage) { notify(method, params) })
	defer c.Close()
	deadline := cmdwire.CloseUnanswered(conn, attachBy)
	err := c.Call(ctx, "attach", attach, nil, nil)
	if !deadline.Answered() {
		return ErrAttachUnanswered
	}
	if err != nil {
		if rerr := (*jsonrpc.Error)(nil); !errors.As(err, &rerr) && ctx.Err() == nil {
			return fmt.Errorf("%w (%v)", ErrNotAttached, err)
		}
		return remoteError(err)
	}
	for _, m := range newHost(nil, Session{}, nil).table() { // the table's shapes; its engine is the server's
		m.relayedTool(c)(srv)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-c.Done():
			cancel(ErrServerGone)
		case <-ctx.Done():
		}
	}()
	err = srv.Run(ctx, &mcp.IOTransport{Reader: closableInput(r), Writer: nopWriteCloser{w}})
	if cause := context.Cause(ctx); errors.Is(cause, ErrServerGone) {
		return cause
	}
	return err
}

// relayedCall is method as a request on the resident server c talks to.
// Progress is asked for when the MCP request asked for it.
func relayedCall[P, R any](c *jsonrpc.Client, method string) func(context.Context, P) (R, error) {
	return func(ctx context.Context, p P) (R, error) {
		var progress func(json.RawMessage)
		if _, ok := ctx.Value(reporterKey{}).(func(any)); ok {
			progress = func(v json.RawMessage) { reportProgress(ctx, progressValue(v)) }
		}
		var res R
		err := c.Call(ctx, method, p, progress, &res)
		return res, remoteError(err)
	}
}

// progressValue is a $/progress value of the server as the value its
// method reported: a scan's (it counts files) or a phase's.
func progressValue(raw json.RawMessage) any {
	var probe struct {
		Files *uint64 `json:"files"`
	}
	if json.Unmarshal(raw, &probe) == nil && probe.Files != nil {
		var s scanValue
		_ = json.Unmarshal(raw, &s)
		return s
	}
	var p phaseValue
	_ = json.Unmarshal(raw, &p)
	return p
}

// RemoteError is the error a resident server answered a relayed request
// with, passed on unchanged: as the same JSON-RPC error (MapError) and as
// its exit code (ExitCode).
type RemoteError struct {
	Code    int
	Message string
	Data    ErrorData
}

func (e *RemoteError) Error() string { return e.Message }

// remoteError makes an error reply of the server a *RemoteError; other
// errors (the connection's, the context's) and nil are returned as they
// are.
func remoteError(err error) error {
	var rerr *jsonrpc.Error
	if !errors.As(err, &rerr) {
		return err
	}
	re := &RemoteError{Code: rerr.Code, Message: rerr.Message}
	if raw, ok := rerr.Data.(json.RawMessage); ok {
		_ = json.Unmarshal(raw, &re.Data)
	}
	if re.Data.ExitCode == 0 { // not one of the method table's errors (e.g. an unknown method)
		re.Data = ErrorData{ExitCode: ExitError, Kind: "error"}
	}
	return re
}
