package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
)

// Client sends requests to a JSON-RPC 2.0 peer over one connection and
// matches the replies to them by id; it is safe for concurrent use. Every
// message is one line each way, as a Conn writes them. The notifications
// the peer sends go to the function given to NewClient, in the order they
// arrive, except "$/progress" for a request in flight, which goes to that
// request's progress function. Requests the peer sends are ignored.
type Client struct {
	rw       io.ReadWriteCloser
	onNotify func(method string, params json.RawMessage)

	wmu sync.Mutex // serialises writes

	mu      sync.Mutex
	next    int64
	pending map[string]*pendingCall // by id
	err     error                   // why reading ended; set once done is closed

	done chan struct{}
}

// pendingCall is a request waiting for its reply.
type pendingCall struct {
	reply    chan clientReply // buffered: the reader never blocks on it
	progress func(json.RawMessage)
}

// clientReply is a reply as the client reads it.
type clientReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// NewClient starts reading rw; onNotify (nil: dropped) gets the peer's
// notifications. Close ends it.
func NewClient(rw io.ReadWriteCloser, onNotify func(method string, params json.RawMessage)) *Client {
	c := &Client{rw: rw, onNotify: onNotify, pending: map[string]*pendingCall{}, done: make(chan struct{})}
	go c.read()
	return c
}

// Done is closed when the connection ends (Close, or the peer went away):
// calls in flight and later ones fail.
func (c *Client) Done() <-chan struct{} { return c.done }

// Close closes the connection; calls in flight fail with ErrClosed.
func (c *Client) Close() error {
	err := c.rw.Close()
	<-c.done
	return err
}

// Call sends the request method with params (omitted when nil) and decodes
// the reply's result into result (unless nil). An error reply is returned
// as an *Error whose Data is the peer's data as json.RawMessage. progress,
// when set, asks for progress ("_meta.progressToken" in params, which must
// then encode as a JSON object) and gets each "$/progress" value sent
// before the reply. When ctx ends first, "$/cancelRequest" is sent and
// Call returns ctx's error without waiting for the reply. A
// *json.RawMessage result gets the result's bytes as the peer sent them,
// one JSON value in shape but not checked: decoding them checks them.
func (c *Client) Call(ctx context.Context, method string, params any, progress func(json.RawMessage), result any) error {
	c.mu.Lock()
	c.next++
	id := strconv.FormatInt(c.next, 10)
	call := &pendingCall{reply: make(chan clientReply, 1), progress: progress}
	c.pending[id] = call
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	p, err := callParams(params, id, progress != nil)
	if err != nil {
		return fmt.Errorf("jsonrpc: params of %s: %w", method, err)
	}
	if err := c.write(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params,omitempty"`
	}{"2.0", json.RawMessage(id), method, p}); err != nil {
		return err
	}
	select {
	case r := <-call.reply:
		if e := r.Error; e != nil {
			return &Error{Code: e.Code, Message: e.Message, Data: e.Data}
		}
		if result == nil {
			return nil
		}
		if raw, ok := result.(*json.RawMessage); ok && len(r.Result) > 0 {
			*raw = r.Result // one JSON value in shape, checked by its decoding; never reused
			return nil
		}
		return json.Unmarshal(r.Result, result)
	case <-ctx.Done():
		_ = c.write(notificationMsg{JSONRPC: "2.0", Method: "$/cancelRequest", Params: map[string]json.RawMessage{"id": json.RawMessage(id)}})
		return ctx.Err()
	case <-c.done:
		return c.err
	}
}

// callParams encodes params, adding the progress token when asked.
func callParams(params any, id string, withProgress bool) (json.RawMessage, error) {
	if params == nil && !withProgress {
		return nil, nil
	}
	p, err := json.Marshal(params)
	if err != nil || !withProgress {
		return p, err
	}
	obj := map[string]json.RawMessage{}
	if string(p) != "null" {
		if err := json.Unmarshal(p, &obj); err != nil {
			return nil, errors.New("progress needs params that are an object")
		}
	}
	obj["_meta"] = json.RawMessage(`{"progressToken":` + id + `}`)
	return json.Marshal(obj)
}

// write sends one message as one line.
func (c *Client) write(msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-c.done:
		return c.err
	default:
	}
	_, err = c.rw.Write(append(b, '\n'))
	return err
}

// clientMessage is any message the peer sends.
type clientMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	clientReply
}

// read dispatches the peer's messages until the connection ends.
func (c *Client) read() {
	r := bufio.NewReaderSize(c.rw, readChunk)
	var err error
	for {
		var line []byte
		if line, err = r.ReadBytes('\n'); len(line) > 0 {
			c.dispatch(line)
		}
		if err != nil {
			break
		}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		err = ErrClosed
	}
	c.mu.Lock()
	c.err = err
	c.mu.Unlock()
	close(c.done)
}

// dispatch hands one line to the call it answers or reports on, or to
// onNotify.
func (c *Client) dispatch(line []byte) {
	if id, result, ok := plainReply(line); ok {
		c.answer(id, clientReply{Result: result})
		return
	}
	var m clientMessage
	if json.Unmarshal(line, &m) != nil {
		return // not a message: nothing to match it to
	}
	switch {
	case m.Method == ProgressMethod && m.ID == nil:
		var p struct{ Token, Value json.RawMessage }
		if json.Unmarshal(m.Params, &p) != nil {
			return
		}
		if call := c.call(string(p.Token)); call != nil && call.progress != nil {
			call.progress(p.Value)
		}
	case m.Method != "" && m.ID == nil:
		if c.onNotify != nil {
			c.onNotify(m.Method, m.Params)
		}
	case m.Method == "" && m.ID != nil:
		c.answer(string(m.ID), m.clientReply)
	}
}

// answer hands r to the call in flight with id, if any.
func (c *Client) answer(id string, r clientReply) {
	if call := c.call(id); call != nil {
		select {
		case call.reply <- r:
		default: // a second reply to one id: the first counts
		}
	}
}

// plainReply reads a line in the exact shape a Conn writes a result in
// (response.resultLine), {"jsonrpc":"2.0","id":N,"result":R} with N
// decimal digits, finding where R ends without decoding or checking it
// (jsonScan); ok is false for any other line, which dispatch decodes in
// full. Decoding the envelope, and then the result out of it, would scan
// a result of megabytes (a diff carrying both sides of every file) three
// more times; checking it here would scan it once more than the caller's
// decoding, which checks it. The result returned is a part of line.
func plainReply(line []byte) (id string, result json.RawMessage, ok bool) {
	rest, found := bytes.CutPrefix(line, []byte(`{"jsonrpc":"2.0","id":`))
	if !found {
		return "", nil, false
	}
	n := 0
	for n < len(rest) && '0' <= rest[n] && rest[n] <= '9' {
		n++
	}
	id = string(rest[:n])
	if rest, found = bytes.CutPrefix(rest[n:], []byte(`,"result":`)); n == 0 || !found {
		return "", nil, false
	}
	// A value followed by more members ("result":1,"error":…) is not this
	// shape: such a line is left to the full decoding.
	s := jsonScan{b: rest}
	if result, found = s.value(); !found || !s.next('}') {
		return "", nil, false
	}
	s.i++
	if s.next(0); s.i < len(rest) { // more than white space after the envelope
		return "", nil, false
	}
	return id, result, true
}

// call is the request in flight with id, nil when none.
func (c *Client) call(id string) *pendingCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pending[id]
}
