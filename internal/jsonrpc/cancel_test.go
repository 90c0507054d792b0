package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// blocker returns a method that signals started and waits for its context,
// reporting the cancellation cause through causes.
func blocker(started chan<- struct{}, causes chan<- error) Route {
	return Method("block", func(ctx context.Context, _ struct{}) (any, error) {
		started <- struct{}{}
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return nil, ctx.Err()
	})
}

func TestCancelRequestCancelsItsContext(t *testing.T) {
	started, causes := make(chan struct{}, 1), make(chan error, 1)
	p := startPeer(t, Options{}, blocker(started, causes))
	p.send(`{"jsonrpc":"2.0","id":"r1","method":"block"}`)
	<-started
	p.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"r1"}}`)
	wantError(t, p.recv(), CodeRequestCancelled, `"r1"`)
	if cause := <-causes; !errors.Is(cause, errCancelRequest) {
		t.Fatalf("cause = %v", cause)
	}
}

func TestCancelledQueuedRequestNeverRuns(t *testing.T) {
	started, causes := make(chan struct{}, 1), make(chan error, 1)
	var ran atomic.Bool
	never := Method("never", func(context.Context, struct{}) (any, error) { ran.Store(true); return nil, nil })
	p := startPeer(t, Options{Concurrency: 1}, blocker(started, causes), never)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"block"}`)
	<-started
	p.send(`{"jsonrpc":"2.0","id":2,"method":"never"}`)
	p.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":2}}`)
	wantError(t, p.recv(), CodeRequestCancelled, "2")
	p.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}`)
	wantError(t, p.recv(), CodeRequestCancelled, "1")
	if ran.Load() {
		t.Fatal("a request cancelled while queued ran")
	}
}

func TestCancelOfUnknownOrMalformedIDIsIgnored(t *testing.T) {
	p := startPeer(t, Options{}, echo)
	p.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":99}}`)
	p.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":{}}}`)
	p.send(`{"jsonrpc":"2.0","method":"$/cancelRequest"}`)
	p.send(`{"jsonrpc":"2.0","id":"c","method":"$/cancelRequest","params":{"id":98}}`)
	wantResult(t, p.recv(), `"c"`, "null")
	p.send(`{"jsonrpc":"2.0","id":1,"method":"echo"}`)
	wantResult(t, p.recv(), "1", `{"text":"","n":0}`)
}

// TestCancelRacingCompletion sends each request and its cancellation in one
// write, so the cancellation lands before, during or after the handler: the
// request gets exactly one reply, its result or RequestCancelled; a handler
// that ignores cancellation and ran keeps its result; and the id is free
// again afterwards.
func TestCancelRacingCompletion(t *testing.T) {
	var ran sync.Map
	quick := Method("quick", func(ctx context.Context, p echoParams) (int, error) {
		ran.Store(p.N, true)
		if p.N%2 == 0 {
			return p.N, ctx.Err() // fails only when already cancelled
		}
		return p.N, nil // finishes whatever happens
	})
	p := startPeer(t, Options{}, quick)
	var cancelled, completed int
	for i := range 500 {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"same","method":"quick","params":{"n":%d}}`+"\n"+
			`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"same"}}`, i))
		r := p.recv()
		_, didRun := ran.Load(i)
		switch {
		case r.Error != nil && r.Error.Code == CodeRequestCancelled && (i%2 == 0 || !didRun):
			cancelled++
		case r.Error == nil && string(r.Result) == fmt.Sprint(i) && didRun:
			completed++
		default:
			t.Fatalf("request %d (ran %v): reply %s %+v", i, didRun, r.Result, r.Error)
		}
	}
	p.send(`{"jsonrpc":"2.0","id":"last","method":"quick","params":{"n":1}}`)
	wantResult(t, p.recv(), `"last"`, "1")
	t.Logf("%d cancelled, %d completed", cancelled, completed)
}
