package protocol

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ckpt/ckpt/engine"
)

// mcpServer is the MCP server the tools are added to.
type mcpServer = mcp.Server

// mcpInstructions tells an MCP client how the tools fit together.
const mcpInstructions = "Save a checkpoint before and after changing files; diff and restore to rewind."

// nopWriteCloser leaves the writer open: the process's stdout outlives a
// session.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// NewMCPServer makes the MCP server of the method table on e. Events go to
// every connected session as log messages.
func NewMCPServer(e *engine.Engine, s Session, version string) *mcp.Server {
	srv := newMCPServer(version)
	for _, m := range newHost(e, s, mcpNotifier(srv)).table() {
		m.tool(srv)
	}
	return srv
}

// newMCPServer is an MCP server without tools.
func newMCPServer(version string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "ckpt", Title: "ckpt checkpoints", Version: version},
		&mcp.ServerOptions{Instructions: mcpInstructions, Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}}})
	srv.AddReceivingMiddleware(argumentErrors)
	return srv
}

// argumentErrors gives a tool call the SDK refused before it reached a
// tool (arguments that do not match the tool's input schema, or do not
// decode) the structured error of a usage mistake, which every failed
// call of a tool carries (toolError): such results are the only failed
// ones without it.
func argumentErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if r, ok := res.(*mcp.CallToolResult); ok && r != nil && r.IsError && r.StructuredContent == nil {
			msg := "invalid arguments"
			if len(r.Content) > 0 {
				if text, ok := r.Content[0].(*mcp.TextContent); ok {
					msg = text.Text
				}
			}
			*r = *toolError(UsageError(msg))
		}
		return res, err
	}
}

// mcpNotifier sends an event to every session of srv as a log message of
// the logger "ckpt": {"event": method, "params": params}.
func mcpNotifier(srv *mcp.Server) func(method string, params any) {
	return func(method string, params any) {
		for ss := range srv.Sessions() {
			_ = ss.Log(context.Background(), &mcp.LoggingMessageParams{Logger: "ckpt", Level: "info",
				Data: map[string]any{"event": method, "params": params}})
		}
	}
}

// mcpTool makes the function adding fn as the tool "ckpt_"+name, its input
// schema inferred from P and its output schema from R and toolErrorJSON
// (see toolOutputSchema). A failed call's result carries the error serve
// sends as structured content (see toolError), so the SDK is given the
// schema rather than R itself: it would otherwise replace that content with
// a zero R.
func mcpTool[P, R any](name, title string, acc access, doc string, fn func(context.Context, P) (R, error)) func(*mcp.Server) {
	return func(s *mcp.Server) {
		out, err := toolOutputSchema[R]()
		if err != nil {
			panic(fmt.Sprintf("tool %s: output schema: %v", name, err)) // a programming error in the method table
		}
		tool := &mcp.Tool{Name: "ckpt_" + name, Title: title, Description: doc, Annotations: annotations(title, acc), OutputSchema: out}
		mcp.AddTool(s, tool, func(ctx context.Context, req *mcp.CallToolRequest, p P) (*mcp.CallToolResult, any, error) {
			if token := req.Params.GetProgressToken(); token != nil {
				ctx = withReporter(ctx, progressSender(ctx, req.Session, token))
			}
			res, err := fn(ctx, p)
			if err != nil {
				return toolError(err), nil, nil
			}
			return nil, res, nil
		})
	}
}

// annotations are the hints MCP clients use to decide what to confirm.
func annotations(title string, acc access) *mcp.ToolAnnotations {
	yes, no := true, false
	ann := &mcp.ToolAnnotations{Title: title, ReadOnlyHint: acc == query, OpenWorldHint: &no}
	switch acc {
	case write:
		ann.DestructiveHint = &no
	case destructive:
		ann.DestructiveHint = &yes
	}
	return ann
}

// toolOutputSchema is the output schema of a tool returning R: an object
// that is either R or, on a failed call, toolErrorJSON. Clients validate the
// structured content of failed calls too (the TypeScript SDK does), so the
// schema has to admit both.
func toolOutputSchema[R any]() (*jsonschema.Schema, error) {
	ok, err := jsonschema.For[R](nil)
	if err != nil {
		return nil, err
	}
	failed, err := jsonschema.For[toolErrorJSON](nil)
	if err != nil {
		return nil, err
	}
	return &jsonschema.Schema{Type: "object", AnyOf: []*jsonschema.Schema{ok, failed}}, nil
}

// toolErrorJSON is the structured content of a failed call: the JSON-RPC
// error serve sends for the same request.
type toolErrorJSON struct {
	Error toolErrorBody `json:"error"`
}

type toolErrorBody struct {
	Code    int       `json:"code"`
	Message string    `json:"message"`
	Data    ErrorData `json:"data"`
}

// toolError is a failed call's result: the message as text, and the error
// serve sends (code, message, data with exit_code, kind, conflicts) as
// structured content.
func toolError(err error) *mcp.CallToolResult {
	rerr := MapError(err)
	data, _ := rerr.Data.(ErrorData) // MapError always sets it
	body := toolErrorBody{Code: rerr.Code, Message: rerr.Message, Data: data}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: rerr.Message}},
		StructuredContent: toolErrorJSON{Error: body}}
}

// progressSender sends a request's progress values as MCP progress
// notifications, counting them. It is safe for concurrent use: gc and verify
// report from several goroutines.
func progressSender(ctx context.Context, ss *mcp.ServerSession, token any) func(any) {
	var n atomic.Int64
	return func(v any) {
		params := &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(n.Add(1))}
		switch p := v.(type) {
		case phaseValue:
			params.Message = p.Phase
			if p.Total > 0 {
				params.Progress, params.Total = float64(p.Done), float64(p.Total)
			}
		case scanValue:
			params.Message = fmt.Sprintf("%s: %d files", p.Phase, p.Files)
		}
		_ = ss.NotifyProgress(ctx, params)
	}
}
