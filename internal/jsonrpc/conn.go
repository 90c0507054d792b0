package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Conn is one connection of a Server. Serve runs it; Notify and Close are
// safe to call from any goroutine, handlers included.
type Conn struct {
	srv      *Server
	in       io.Reader
	out      io.Writer
	slots    chan struct{} // one per running handler
	admitted chan struct{} // one per admitted request
	handlers sync.WaitGroup

	wmu  sync.Mutex // serialises writes
	werr error      // first write error; guarded by wmu

	closeOnce sync.Once
	closeErr  error
	closed    chan struct{}

	mu struct {
		sync.Mutex
		cancel   context.CancelCauseFunc // of the requests' base context while serving
		inflight map[string]*inflight    // by idKey
	}
}

// inflight is a request being handled that can be cancelled by id.
type inflight struct {
	cancel context.CancelCauseFunc
}

// Serve reads and answers messages until the end of input, Close, a write
// error or ctx's cancellation, then waits for every handler to return. It
// returns nil at the end of input or after Close, ctx's error when ctx was
// cancelled, else the read or write error. Serve may be called once.
func (c *Conn) Serve(ctx context.Context) error {
	base, cancel := context.WithCancelCause(ctx)
	defer cancel(ErrClosed)
	c.mu.Lock()
	c.mu.cancel = cancel
	c.mu.Unlock()
	select {
	case <-c.closed:
		return nil
	default:
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer func() {
		if !stop() {
			<-c.closed // let the AfterFunc's Close finish before returning
		}
	}()
	err := c.readLoop(base)
	c.handlers.Wait()
	select {
	case <-c.closed:
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c.wmu.Lock()
		defer c.wmu.Unlock()
		return c.werr
	default:
	}
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// readLoop reads and dispatches messages until the input ends or fails.
func (c *Conn) readLoop(base context.Context) error {
	lines := newLineReader(c.in, c.srv.opts.MaxMessageBytes)
	for {
		line, err := lines.next()
		var tooLong errTooLong
		switch {
		case errors.As(err, &tooLong):
			c.write(response{ID: nullID, Error: invalidRequest(err.Error())})
			continue
		case err != nil:
			return err
		}
		c.dispatchLine(base, line)
	}
}

// dispatchLine answers one line: a request or a batch.
func (c *Conn) dispatchLine(base context.Context, line []byte) {
	reqs, batch, perr := decodeMessage(line)
	switch {
	case perr != nil:
		c.write(response{ID: nullID, Error: perr})
	case !batch:
		c.dispatch(base, reqs[0], func(r *response) {
			if r != nil {
				c.write(*r)
			}
		})
	default:
		b := &batchReply{conn: c, replies: make([]*response, len(reqs)), pending: len(reqs)}
		for i := range reqs {
			c.dispatch(base, reqs[i], func(r *response) { b.set(i, r) })
		}
	}
}

// dispatch answers one request through done, which gets nil when no reply
// is due. Requests with a method to run are handled on their own goroutine;
// dispatch blocks while MaxInFlight requests are admitted.
func (c *Conn) dispatch(base context.Context, req request, done func(*response)) {
	switch {
	case req.ignore:
		done(nil)
		return
	case req.err != nil:
		done(&response{ID: req.id, Error: req.err})
		return
	case req.method == CancelMethod:
		c.cancelRequest(req.params)
		done(replyUnlessNotification(req, nil))
		return
	}
	route, ok := c.srv.routes[req.method]
	if !ok {
		done(replyUnlessNotification(req, &Error{Code: CodeMethodNotFound, Message: fmt.Sprintf("method not found: %q", req.method)}))
		return
	}
	ctx, cancel := context.WithCancelCause(base)
	if !c.register(req.id, cancel) {
		cancel(nil)
		done(&response{ID: req.id, Error: invalidRequest("id is already used by a request in flight")})
		return
	}
	admitted := false
	select {
	case c.admitted <- struct{}{}:
		admitted = true
	case <-ctx.Done():
	}
	c.handlers.Add(1)
	go func() {
		defer c.handlers.Done()
		resp := c.run(ctx, route, req)
		c.unregister(req.id) // before replying: the peer may reuse the id at once
		cancel(nil)
		if admitted {
			<-c.admitted
		}
		done(resp)
	}()
}

// replyUnlessNotification is the reply to req with err (nil: a null result),
// or nil when req is a notification.
func replyUnlessNotification(req request, err *Error) *response {
	if req.notification() {
		return nil
	}
	if err != nil {
		return &response{ID: req.id, Error: err}
	}
	return &response{ID: req.id, Result: json.RawMessage("null")}
}
