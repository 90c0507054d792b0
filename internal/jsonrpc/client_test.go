package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"testing"
)

// clientOf connects a Client to a server answering routes over an
// in-memory connection; the server's connection is returned to notify.
func clientOf(t *testing.T, onNotify func(string, json.RawMessage), routes ...Route) (*Client, *Conn) {
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
