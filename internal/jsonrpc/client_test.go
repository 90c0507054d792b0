package jsonrpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"
)

// clientOf connects a Client to a server answering routes over an
// in-memory connection; the server's connection is returned to notify.
func clientOf(t testing.TB, onNotify func(string, json.RawMessage), routes ...Route) (*Client, *Conn) {
	t.Helper()
	srv, err := NewServer(Options{MapError: func(err error) *Error {
		return &Error{Code: CodeServerError, Message: err.Error(), Data: map[string]int{"exit_code": 3}}
	}}, routes...)
	if err != nil {
		t.Fatal(err)
	}
	a, b := net.Pipe()
	conn := srv.NewConn(b, b)
	served := make(chan error, 1)
	go func() { served <- conn.Serve(context.Background()) }()
	c := NewClient(a, onNotify)
	t.Cleanup(func() {
		c.Close()
		b.Close()
		<-served
	})
	return c, conn
}

// A call gets its own result, an error reply with the peer's data, and the
// progress the peer sent for it before the reply; notifications go to the
// client's function.
func TestClientCallsAndHearsThePeer(t *testing.T) {
	notified := make(chan string, 1)
	var conn *Conn
	progressing := Method("work", func(ctx context.Context, p echoParams) (echoParams, error) {
		for i := range p.N {
			if err := Progress(ctx, i); err != nil {
				return p, err
			}
		}
		conn.Notify("done", p)
		return p, nil
	})
	failing := Method("fail", func(context.Context, echoParams) (echoParams, error) { return echoParams{}, errors.New("store busy") })
	c, conn := clientOf(t, func(m string, p json.RawMessage) { notified <- m + " " + string(p) }, echo, progressing, failing)
	ctx := context.Background()

	var got echoParams
	if err := c.Call(ctx, "echo", echoParams{Text: "hi", N: 2}, nil, &got); err != nil || got != (echoParams{"hi", 2}) {
		t.Fatalf("echo = %+v, %v", got, err)
	}
	var steps []string
	if err := c.Call(ctx, "work", echoParams{Text: "w", N: 3}, func(v json.RawMessage) { steps = append(steps, string(v)) }, &got); err != nil {
		t.Fatal(err)
	}
	if len(steps) != 3 || steps[0] != "0" || steps[2] != "2" {
		t.Fatalf("progress = %q", steps)
	}
	if n := <-notified; n != `done {"text":"w","n":3}` {
		t.Fatalf("notification = %q", n)
	}
	err := c.Call(ctx, "fail", nil, nil, nil)
	var rerr *Error
	if !errors.As(err, &rerr) || rerr.Message != "store busy" || string(rerr.Data.(json.RawMessage)) != `{"exit_code":3}` {
		t.Fatalf("failed call = %#v", err)
	}
	if err := c.Call(ctx, "nope", nil, nil, nil); !errors.As(err, &rerr) || rerr.Code != CodeMethodNotFound {
		t.Fatalf("unknown method = %v", err)
	}
}

// A call whose context ends cancels the peer's request and returns at
// once; a call after the peer went away fails instead of waiting.
func TestClientCancelsAndSeesThePeerGo(t *testing.T) {
	started, causes := make(chan struct{}, 1), make(chan error, 1)
	c, conn := clientOf(t, nil, blocker(started, causes))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	if err := c.Call(ctx, "block", nil, nil, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call = %v", err)
	}
	if cause := <-causes; !errors.Is(cause, errCancelRequest) {
		t.Fatalf("the peer's request ended by %v", cause)
	}
	conn.Close()
	<-c.Done()
	if err := c.Call(context.Background(), "block", nil, nil, nil); err == nil {
		t.Fatal("a call after the peer went away succeeded")
	}
}

// A reply is read the same whether it has the exact shape a Conn writes
// (read without decoding the envelope) or any other a peer may send: its
// members in another order, another member after the result, spaces,
// a result ending in a closing brace inside a string, an error. A reply
// in the exact shape whose result is not JSON reaches its call, which
// fails when it decodes it instead of waiting for a reply that will not
// come.
func TestClientReadsRepliesOfEveryShape(t *testing.T) {
	const notJSON = `{"jsonrpc":"2.0","id":%s,"result":{"text":nope}}`
	replies := []struct {
		line    string // %s is the request's id
		result  string // the result as the call gets it raw; "" for an error
		decoded bool   // the call decodes the result instead: want its syntax error
	}{
		{`{"jsonrpc":"2.0","id":%s,"result":{"text":"a","n":1}}`, `{"text":"a","n":1}`, false},
		{`{"id":%s,"jsonrpc":"2.0","result":{"text":"b"}}`, `{"text":"b"}`, false},
		{`{"jsonrpc":"2.0","id":%s,"result":{"text":"c"},"extra":[1,2]}`, `{"text":"c"}`, false},
		{`{"jsonrpc":"2.0","id":%s,"result":"d}"}  `, `"d}"`, false},
		{`{"jsonrpc": "2.0", "id": %s, "result": [1, {"e": "}"}]}`, `[1, {"e": "}"}]`, false},
		{`{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"f"}}`, "", false},
		{notJSON, `{"text":nope}`, false},
		{notJSON, "", true},
	}
	// A Conn's own reply is read without decoding its envelope.
	line, err := response{ID: json.RawMessage("12"), Result: json.RawMessage(`{"a":"}"}`)}.resultLine()
	if err != nil {
		t.Fatal(err)
	}
	if id, result, ok := plainReply(line); !ok || id != "12" || string(result) != `{"a":"}"}` {
		t.Fatalf("plainReply(%q) = %q, %s, %v", line, id, result, ok)
	}
	a, b := net.Pipe()
	defer b.Close()
	go func() { // the peer: each request gets the next reply
		r := bufio.NewReader(b)
		for _, reply := range replies {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return
			}
			var req struct{ ID json.RawMessage }
			if err := json.Unmarshal(line, &req); err != nil {
				t.Error(err)
				return
			}
			fmt.Fprintf(b, reply.line+"\n", req.ID)
		}
	}()
	c := NewClient(a, nil)
	defer c.Close()
	// A bound, should a reply be dropped: the call then fails instead of
	// waiting for ever.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i, reply := range replies {
		if reply.decoded {
			var text struct{ Text string }
			var syntax *json.SyntaxError
			if err := c.Call(ctx, "m", nil, nil, &text); !errors.As(err, &syntax) {
				t.Fatalf("reply %d: %v, want the syntax error of its result", i, err)
			}
			continue
		}
		var raw json.RawMessage
		err := c.Call(ctx, "m", nil, nil, &raw)
		switch {
		case reply.result == "":
			var rerr *Error
			if !errors.As(err, &rerr) || rerr.Message != "f" {
				t.Fatalf("reply %d: %v, want the peer's error", i, err)
			}
		case err != nil || string(raw) != reply.result:
			t.Fatalf("reply %d: %s, %v; want %s", i, raw, err, reply.result)
		}
	}
}
