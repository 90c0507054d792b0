package jsonrpc

import (
	"bytes"
	"encoding/json"
	"sync"
)

// Notify sends the notification method with params (omitted when nil). It
// returns ErrClosed after Close, or the write error; a failed write ends the
// connection.
func (c *Conn) Notify(method string, params any) error {
	return c.write(notificationMsg{Method: method, Params: params})
}

// write sends one message as one line under the write lock. Nothing is
// written after Close (ErrClosed). The first write error is kept, returned
// by later writes, and closes the connection.
func (c *Conn) write(msg any) error {
	line, err := encodeLine(msg)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.werr != nil {
		return c.werr
	}
	select {
	case <-c.closed:
		return ErrClosed
	default:
	}
	if _, err := c.out.Write(line); err != nil {
		c.werr = err
		c.Close()
		return err
	}
	return nil
}

// encodeLine encodes msg as one line, without HTML escapes.
func encodeLine(msg any) ([]byte, error) {
	switch m := msg.(type) {
	case response:
		m.JSONRPC = "2.0"
		if m.Error == nil && len(m.Result) > 0 {
			return m.resultLine()
		}
		msg = m
	case notificationMsg:
		m.JSONRPC = "2.0"
		msg = m
	}
	line, err := Marshal(msg)
	if err != nil {
		return nil, err
	}
	return append(line, '\n'), nil
}

// Encoded is a value that may hold its own encoding: compact JSON, as
// Marshal would give it (a method's result of megabytes, encoded in
// parallel as it was built). Marshal gives those bytes as they are; a nil
// EncodedJSON means the value is encoded as any other.
type Encoded interface {
	EncodedJSON() []byte
}

// Marshal encodes v as json.Marshal does, without HTML escapes: how a
// Conn sends every message, and how ckpt writes every JSON document.
// Source text is full of <, > and &, which would each take six bytes to
// send and a slower path to decode. An Encoded v holding its encoding is
// that encoding, not checked again.
func Marshal(v any) ([]byte, error) {
	if e, ok := v.(Encoded); ok {
		if b := e.EncodedJSON(); b != nil {
			return b, nil
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// resultLine is the line encodeLine gives for m, a response carrying a
// result, built without scanning the result again: a result is compact
// JSON already (Marshal's, or null), and encoding it as the
// json.RawMessage it is would check and copy it byte by byte, most of the
// time of a result of megabytes (a diff with both sides of every file).
func (m response) resultLine() ([]byte, error) {
	var line bytes.Buffer
	line.Grow(len(m.ID) + len(m.Result) + 64)
	line.WriteString(`{"jsonrpc":"2.0","id":`)
	if m.ID == nil {
		line.WriteString("null")
	} else if err := json.Compact(&line, m.ID); err != nil {
		return nil, err
	}
	line.WriteString(`,"result":`)
	line.Write(m.Result)
	line.WriteString("}\n")
	return line.Bytes(), nil
}

// Close cancels the requests in flight, closes the reader when it is an
// io.Closer (so Serve's blocked read returns) and makes Notify fail with
// ErrClosed. Serve returns once the handlers have returned. Close is
// idempotent and returns the reader's Close error.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		cancel := c.mu.cancel
		c.mu.Unlock()
		if cancel != nil {
			cancel(ErrClosed)
		}
		if cl, ok := c.in.(interface{ Close() error }); ok {
			c.closeErr = cl.Close()
		}
		close(c.closed)
	})
	return c.closeErr
}

// batchReply gathers the replies of a batch and writes them as one array
// when the last member is answered; nothing when all were notifications.
type batchReply struct {
	conn    *Conn
	mu      sync.Mutex
	replies []*response
	pending int
}

func (b *batchReply) set(i int, r *response) {
	b.mu.Lock()
	b.replies[i] = r
	b.pending--
	last := b.pending == 0
	b.mu.Unlock()
	if !last {
		return
	}
	out := make([]response, 0, len(b.replies))
	for _, r := range b.replies {
		if r != nil {
			r.JSONRPC = "2.0"
			out = append(out, *r)
		}
	}
	if len(out) > 0 {
		b.conn.write(out)
	}
}
