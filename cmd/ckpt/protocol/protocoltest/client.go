// Package protocoltest drives a JSON-RPC connection of ckpt's host protocol
// (package protocol) from a test, one request at a time, keeping the
// notifications that arrive before each reply.
package protocoltest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
)

// Message is any message a server writes: a reply or a notification.
type Message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int                `json:"code"`
		Message string             `json:"message"`
		Data    protocol.ErrorData `json:"data"`
	} `json:"error"`
}

// Client writes requests to a server's input and reads its output. Any
// failure to write or read fails the test.
type Client struct {
	t   testing.TB
	in  io.Writer
	out *bufio.Scanner
	id  int
}

// NewClient is a client writing to in and reading from out.
func NewClient(t testing.TB, in io.Writer, out io.Reader) *Client {
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 64<<20)
	return &Client{t: t, in: in, out: sc}
}

// Send writes one raw line.
func (c *Client) Send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

// Next reads one message.
func (c *Client) Next() Message {
	c.t.Helper()
	if !c.out.Scan() {
		c.t.Fatalf("the server's output ended: %v", c.out.Err())
	}
	var m Message
	if err := json.Unmarshal(c.out.Bytes(), &m); err != nil {
		c.t.Fatalf("%q: %v", c.out.Text(), err)
	}
	return m
}

// Drain reads and drops the server's output until it ends.
func (c *Client) Drain() {
	for c.out.Scan() {
	}
}

// Call sends a request and returns its reply and the notifications sent
// before it.
func (c *Client) Call(method string, params any) (Message, []Message) {
	c.t.Helper()
	c.id++
	p, err := json.Marshal(params)
	if err != nil {
		c.t.Fatal(err)
	}
	c.Send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, c.id, method, p))
	var notes []Message
	for {
		m := c.Next()
		if m.Method != "" {
			notes = append(notes, m)
			continue
		}
		if string(m.ID) != fmt.Sprint(c.id) {
			c.t.Fatalf("reply to %s, want %d", m.ID, c.id)
		}
		return m, notes
	}
}

// OK calls method, fails the test on an error reply, and decodes the result
// into out (unless nil).
func (c *Client) OK(method string, params, out any) []Message {
	c.t.Helper()
	m, notes := c.Call(method, params)
	if m.Error != nil {
		c.t.Fatalf("%s: %+v", method, *m.Error)
	}
	if out != nil {
		if err := json.Unmarshal(m.Result, out); err != nil {
			c.t.Fatalf("%s result %s: %v", method, m.Result, err)
		}
	}
	return notes
}
