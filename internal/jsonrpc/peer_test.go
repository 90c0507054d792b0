package jsonrpc

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/ckpt/ckpt/internal/testbound"
)

// deadline bounds every wait for a message, so a missing reply fails the
// test instead of hanging it.
const deadline = testbound.Hang

// testPeer is the client side of a connection under test.
type testPeer struct {
	t     *testing.T
	in    *io.PipeWriter
	conn  *Conn
	lines chan string
	done  chan error
}

// reply is a decoded reply or notification.
type reply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func startPeer(t *testing.T, opts Options, routes ...Route) *testPeer {
	t.Helper()
	srv, err := NewServer(opts, routes...)
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &testPeer{t: t, in: inW, conn: srv.NewConn(inR, outW), lines: make(chan string, 4096), done: make(chan error, 1)}
	go func() {
		p.done <- p.conn.Serve(context.Background())
		outW.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() {
		p.conn.Close()
		p.wait()
	})
	return p
}

func (p *testPeer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("send: %v", err)
	}
}

// line is the next line the server wrote.
func (p *testPeer) line() string {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.t.Fatal("connection ended, want a message")
		}
		return l
	case <-time.After(deadline):
		p.t.Fatal("no message from the server")
	}
	return ""
}

// recv is the next message, decoded.
func (p *testPeer) recv() reply {
	p.t.Helper()
	l := p.line()
	var r reply
	if err := json.Unmarshal([]byte(l), &r); err != nil {
		p.t.Fatalf("reply %q: %v", l, err)
	}
	if r.JSONRPC != "2.0" {
		p.t.Fatalf("reply %q lacks jsonrpc 2.0", l)
	}
	return r
}

// wait is Serve's result once it returned.
func (p *testPeer) wait() error {
	p.t.Helper()
	select {
	case err := <-p.done:
		p.done <- err
		return err
	case <-time.After(deadline):
		p.t.Fatal("Serve did not return")
	}
	return nil
}

// wantError checks r is an error reply with code and id.
func wantError(t *testing.T, r reply, code int, id string) {
	t.Helper()
	if r.Error == nil || r.Error.Code != code || string(r.ID) != id {
		t.Fatalf("reply = %+v (error %+v), want error %d with id %s", r, r.Error, code, id)
	}
}

// wantResult checks r is a success with id and result.
func wantResult(t *testing.T, r reply, id, result string) {
	t.Helper()
	if r.Error != nil || string(r.ID) != id || string(r.Result) != result {
		t.Fatalf("reply = id %s result %s error %+v, want id %s result %s", r.ID, r.Result, r.Error, id, result)
	}
}

type echoParams struct {
	Text string `json:"text"`
	N    int    `json:"n"`
}

// echo answers its params.
var echo = Method("echo", echoFn)

func echoFn(_ context.Context, p echoParams) (echoParams, error) { return p, nil }

// wantErrorNaming checks r is an error reply with code and id whose message
// contains text.
func wantErrorNaming(t *testing.T, r reply, code int, id, text string) {
	t.Helper()
	wantError(t, r, code, id)
	if !strings.Contains(r.Error.Message, text) {
		t.Fatalf("message %q does not contain %q", r.Error.Message, text)
	}
}

// stillServes checks the connection answers a request with id.
func (p *testPeer) stillServes(id string) {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"echo"}`)
	wantResult(p.t, p.recv(), id, `{"text":"","n":0}`)
}

// echoServer is a server answering only echo.
func echoServer(t *testing.T) *Server {
	t.Helper()
	srv, err := NewServer(Options{}, echo)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}
