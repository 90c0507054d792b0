package jsonrpc

import (
	"context"
	"encoding/json"
)

// ProgressMethod is the notification Progress sends.
const ProgressMethod = "$/progress"

// progressKey is the context key of a request's progress reporter.
type progressKey struct{}

// progressReporter sends progress for one request.
type progressReporter struct {
	conn  *Conn
	token json.RawMessage
}

// progressParams is the params of a $/progress notification.
type progressParams struct {
	Token json.RawMessage `json:"token"`
	Value any             `json:"value"`
}

// Progress sends "$/progress" {"token", "value"} for the request ctx
// belongs to, when its params carried "_meta.progressToken"; otherwise it
// does nothing and returns nil. It returns ErrClosed after Close, or the
// write error. Progress sent before a handler returns precedes its reply.
func Progress(ctx context.Context, value any) error {
	p, ok := ctx.Value(progressKey{}).(progressReporter)
	if !ok {
		return nil
	}
	return p.conn.Notify(ProgressMethod, progressParams{Token: p.token, Value: value})
}

// withProgress attaches a reporter to ctx when the request has a token.
func withProgress(ctx context.Context, c *Conn, token json.RawMessage) context.Context {
	if token == nil {
		return ctx
	}
	return context.WithValue(ctx, progressKey{}, progressReporter{conn: c, token: token})
}
