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
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	switch m := msg.(type) {
	case response:
		m.JSONRPC = "2.0"
		msg = m
	case notificationMsg:
		m.JSONRPC = "2.0"
		msg = m
	}
	if err := enc.Encode(msg); err != nil {
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
	if _, err := c.out.Write(buf.Bytes()); err != nil {
		c.werr = err
		c.Close()
		return err
	}
	return nil
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
