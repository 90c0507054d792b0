package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// run waits for a handler slot, calls the route and shapes its reply (nil
// for a notification). A request cancelled before it gets a slot never runs.
func (c *Conn) run(ctx context.Context, route Route, req request) *response {
	var (
		result any
		err    error
	)
	select {
	case <-ctx.Done():
		err = context.Cause(ctx)
	case c.slots <- struct{}{}:
		if err = context.Cause(ctx); err == nil {
			result, err = c.call(ctx, route, req.params)
		}
		<-c.slots
	}
	if req.notification() {
		return nil
	}
	if err != nil {
		return &response{ID: req.id, Error: c.errorOf(ctx, err)}
	}
	raw, merr := Marshal(result)
	if merr != nil {
		return &response{ID: req.id, Error: &Error{Code: CodeInternalError, Message: "cannot encode the result: " + merr.Error()}}
	}
	return &response{ID: req.id, Result: raw}
}

// call runs the route's handler, turning a panic into an internal error so
// one faulty method cannot take the connection down.
func (c *Conn) call(ctx context.Context, route Route, params json.RawMessage) (result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &Error{Code: CodeInternalError, Message: fmt.Sprintf("internal error: %v", p)}
		}
	}()
	params, token, err := splitMeta(params)
	if err != nil {
		return nil, err
	}
	return route.call(withProgress(ctx, c, token), params)
}

// errorOf is the error sent for a failed request: RequestCancelled when its
// context was cancelled, the *Error the handler returned, or the mapped one.
func (c *Conn) errorOf(ctx context.Context, err error) *Error {
	if ctx.Err() != nil {
		msg := "request cancelled"
		if cause := context.Cause(ctx); errors.Is(cause, ErrClosed) {
			msg = "request cancelled: connection closed"
		}
		return &Error{Code: CodeRequestCancelled, Message: msg}
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return c.srv.opts.MapError(err)
}

// register records a cancellable request under its id; it reports false
// when a request in flight already has that id. Notifications and null ids
// cannot be cancelled and are not recorded.
func (c *Conn) register(id json.RawMessage, cancel context.CancelCauseFunc) bool {
	if id == nil || string(id) == "null" {
		return true
	}
	key := idKey(id)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.mu.inflight[key]; dup {
		return false
	}
	c.mu.inflight[key] = &inflight{cancel: cancel}
	return true
}

func (c *Conn) unregister(id json.RawMessage) {
	if id == nil || string(id) == "null" {
		return
	}
	c.mu.Lock()
	delete(c.mu.inflight, idKey(id))
	c.mu.Unlock()
}

// cancelRequest cancels the request named by params {"id": ID}; unknown ids
// (requests already answered) and malformed params are ignored, as a
// cancellation is only ever a hint.
func (c *Conn) cancelRequest(params json.RawMessage) {
	var p struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(params, &p) != nil || !validID(p.ID) {
		return
	}
	c.mu.Lock()
	r := c.mu.inflight[idKey(p.ID)]
	c.mu.Unlock()
	if r != nil {
		r.cancel(errCancelRequest)
	}
}
