package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
)

func TestRequestIsAnsweredWithItsResult(t *testing.T) {
	p := startPeer(t, Options{}, echo)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"hi","n":2}}`)
	wantResult(t, p.recv(), "1", `{"text":"hi","n":2}`)
	p.send(`{"jsonrpc":"2.0","id":"a","method":"echo"}`)
	wantResult(t, p.recv(), `"a"`, `{"text":"","n":0}`)
}

func TestNotificationRunsButIsNeverAnswered(t *testing.T) {
	var calls atomic.Int32
	ran := make(chan struct{}, 2)
	count := Method("count", func(context.Context, struct{}) (int, error) {
		calls.Add(1)
		ran <- struct{}{}
		return 0, errors.New("fails, yet a notification is never answered")
	})
	p := startPeer(t, Options{}, count, echo)
	p.send(`{"jsonrpc":"2.0","method":"count"}`)
	p.send(`{"jsonrpc":"2.0","method":"nosuch"}`)
	<-ran
	p.send(`{"jsonrpc":"2.0","id":7,"method":"echo"}`)
	wantResult(t, p.recv(), "7", `{"text":"","n":0}`)
	if calls.Load() != 1 {
		t.Fatalf("notification ran %d times", calls.Load())
	}
}

func TestIDRules(t *testing.T) {
	p := startPeer(t, Options{}, echo)
	for _, tc := range []struct {
		id, wantID string
		valid      bool
	}{
		{`"x"`, `"x"`, true},
		{`-12.5e3`, `-12.5e3`, true},
		{`null`, `null`, true},
		{`{"a":1}`, `null`, false},
		{`[1]`, `null`, false},
		{`true`, `null`, false},
	} {
		p.send(`{"jsonrpc":"2.0","method":"echo","id":` + tc.id + `}`)
		r := p.recv()
		if tc.valid {
			wantResult(t, r, tc.wantID, `{"text":"","n":0}`)
		} else {
			wantError(t, r, CodeInvalidRequest, tc.wantID)
		}
	}
}

func TestParseErrorLeavesTheConnectionUsable(t *testing.T) {
	p := startPeer(t, Options{}, echo)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"echo"`)
	wantError(t, p.recv(), CodeParseError, "null")
	p.send(`[{"jsonrpc":"2.0","id":1,"method":"echo"},`)
	wantError(t, p.recv(), CodeParseError, "null")
	p.stillServes("2")
}

func TestInvalidRequestsAreAnsweredWithTheirID(t *testing.T) {
	p := startPeer(t, Options{}, echo)
	for _, tc := range []struct{ line, id string }{
		{`{"id":1,"method":"echo"}`, "1"},
		{`{"jsonrpc":"1.0","id":2,"method":"echo"}`, "2"},
		{`{"jsonrpc":"2.0","id":3,"method":5}`, "3"},
		{`{"jsonrpc":"2.0","id":4,"method":""}`, "4"},
		{`{"jsonrpc":"2.0","id":5,"method":"echo","params":"text"}`, "5"},
		{`{"jsonrpc":"2.0","method":1}`, "null"},
		{`{"jsonrpc":"2.0","ID":6,"Method":"echo"}`, "null"},
		{`42`, "null"},
		{`"echo"`, "null"},
		{`null`, "null"},
	} {
		p.send(tc.line)
		wantError(t, p.recv(), CodeInvalidRequest, tc.id)
	}
}

func TestRepliesFromThePeerAreIgnored(t *testing.T) {
	p := startPeer(t, Options{}, echo)
	p.send(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	p.send(`{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"x"}}`)
	p.send(`{"jsonrpc":"2.0","id":3,"method":"echo"}`)
	wantResult(t, p.recv(), "3", `{"text":"","n":0}`)
}

func TestUnknownMethodIsMethodNotFound(t *testing.T) {
	p := startPeer(t, Options{}, echo)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"nosuch"}`)
	wantErrorNaming(t, p.recv(), CodeMethodNotFound, "1", "nosuch")
}

func TestParamsAreDecodedStrictlyExceptMeta(t *testing.T) {
	p := startPeer(t, Options{}, echo)
	for i, params := range []string{`{"text":"a","extra":1}`, `{"n":"not a number"}`, `[1,2]`, `{"_meta":[1]}`} {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"echo","params":%s}`, i, params))
		wantError(t, p.recv(), CodeInvalidParams, fmt.Sprint(i))
	}
	p.send(`{"jsonrpc":"2.0","id":9,"method":"echo","params":{"text":"a","_meta":{"progressToken":"t","other":1}}}`)
	wantResult(t, p.recv(), "9", `{"text":"a","n":0}`)
	p.send(`{"jsonrpc":"2.0","id":10,"method":"echo","params":null}`)
	wantResult(t, p.recv(), "10", `{"text":"","n":0}`)
}

func TestApplicationErrorsCarryTheirData(t *testing.T) {
	busy := Method("busy", func(context.Context, struct{}) (any, error) {
		return nil, fmt.Errorf("saving: %w", &Error{Code: CodeServerError, Message: "store is busy",
			Data: map[string]any{"exit_code": 3, "kind": "busy"}})
	})
	plain := Method("plain", func(context.Context, struct{}) (any, error) { return nil, errors.New("disk full") })
	mapped := Options{MapError: func(err error) *Error {
		return &Error{Code: CodeServerError, Message: err.Error(), Data: map[string]int{"exit_code": 1}}
	}}
	p := startPeer(t, mapped, busy, plain)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"busy"}`)
	r := p.recv()
	wantError(t, r, CodeServerError, "1")
	if r.Error.Message != "store is busy" || string(r.Error.Data) != `{"exit_code":3,"kind":"busy"}` {
		t.Fatalf("error = %+v data %s", r.Error, r.Error.Data)
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":"plain"}`)
	r = p.recv()
	wantError(t, r, CodeServerError, "2")
	if r.Error.Message != "disk full" || string(r.Error.Data) != `{"exit_code":1}` {
		t.Fatalf("mapped error = %+v data %s", r.Error, r.Error.Data)
	}
}

func TestHandlerPanicIsAnInternalError(t *testing.T) {
	boom := Method("boom", func(context.Context, struct{}) (any, error) { panic("broken invariant") })
	p := startPeer(t, Options{}, boom, echo)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"boom"}`)
	wantErrorNaming(t, p.recv(), CodeInternalError, "1", "broken invariant")
	p.stillServes("2")
}

func TestDuplicateIDInFlightIsInvalid(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	hold := Method("hold", func(context.Context, struct{}) (string, error) {
		close(started)
		<-release
		return "done", nil
	})
	p := startPeer(t, Options{}, hold)
	p.send(`{"jsonrpc":"2.0","id":"same","method":"hold"}`)
	<-started
	p.send(`{"jsonrpc":"2.0","id":"sam\u0065","method":"hold"}`)
	wantError(t, p.recv(), CodeInvalidRequest, `"sam\u0065"`)
	close(release)
	wantResult(t, p.recv(), `"same"`, `"done"`)
}

func TestNewServerRejectsBadRoutes(t *testing.T) {
	for _, routes := range [][]Route{{echo, echo}, {Method("rpc.x", echoFn)}, {Method("$/x", echoFn)}, {{}}} {
		if _, err := NewServer(Options{}, routes...); err == nil {
			t.Errorf("NewServer(%v) accepted", routes[0].Name())
		}
	}
}
