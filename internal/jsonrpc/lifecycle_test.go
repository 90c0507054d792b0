package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func TestNotifySendsWholeLinesFromManyGoroutines(t *testing.T) {
	p := startPeer(t, Options{}, echo)
	const n = 64
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := p.conn.Notify("checkpoint", map[string]any{"toHash": strings.Repeat("a", 4096), "i": i}); err != nil {
				t.Error(err)
			}
		})
	}
	seen := map[float64]bool{}
	for range n {
		r := p.recv()
		var params struct{ I float64 }
		if r.Method != "checkpoint" || r.ID != nil || json.Unmarshal(r.Params, &params) != nil {
			t.Fatalf("event %+v", r)
		}
		seen[params.I] = true
	}
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("%d distinct events, want %d", len(seen), n)
	}
}

func TestOversizedMessageIsRejectedAndTheConnectionGoesOn(t *testing.T) {
	p := startPeer(t, Options{MaxMessageBytes: 100}, echo)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"` + strings.Repeat("x", 200<<10) + `"}}`)
	wantErrorNaming(t, p.recv(), CodeInvalidRequest, "null", "limit of 100 bytes")
	p.stillServes("2")
}

func TestEndOfInputLetsRequestsInFlightFinish(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	slow := Method("slow", func(ctx context.Context, _ struct{}) (string, error) {
		close(started)
		<-release
		return "finished", ctx.Err()
	})
	p := startPeer(t, Options{}, slow)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"slow"}`)
	<-started
	p.in.Close()
	close(release)
	wantResult(t, p.recv(), "1", `"finished"`)
	if err := p.wait(); err != nil {
		t.Fatalf("Serve = %v, want nil at end of input", err)
	}
}

func TestCloseCancelsAndAwaitsRequestsInFlight(t *testing.T) {
	const n = 5
	started := make(chan struct{}, n)
	var returned atomic.Int32
	var causes sync.Map
	wait := Method("wait", func(ctx context.Context, p echoParams) (any, error) {
		defer returned.Add(1)
		started <- struct{}{}
		<-ctx.Done()
		causes.Store(p.N, context.Cause(ctx))
		return nil, ctx.Err()
	})
	p := startPeer(t, Options{}, wait)
	for i := range n {
		p.send(`{"jsonrpc":"2.0","id":` + string(rune('0'+i)) + `,"method":"wait","params":{"n":` + string(rune('0'+i)) + `}}`)
	}
	for range n {
		<-started
	}
	if err := p.conn.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.wait(); err != nil {
		t.Fatalf("Serve after Close = %v", err)
	}
	if got := returned.Load(); got != n {
		t.Fatalf("Serve returned with %d of %d handlers still running", n-got, n)
	}
	causes.Range(func(_, cause any) bool {
		if !errors.Is(cause.(error), ErrClosed) {
			t.Errorf("cause %v, want ErrClosed", cause)
		}
		return true
	})
	if err := p.conn.Notify("late", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Notify after Close = %v", err)
	}
}

func TestCancellingServeContextStopsIt(t *testing.T) {
	srv := echoServer(t)
	inR, _ := io.Pipe()
	conn := srv.NewConn(inR, io.Discard)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- conn.Serve(ctx) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Serve = %v, want context.Canceled", err)
	}
}

// failingWriter fails every write.
type failingWriter struct{}

var errDiskGone = errors.New("disk gone")

func (failingWriter) Write([]byte) (int, error) { return 0, errDiskGone }

func TestWriteErrorEndsServe(t *testing.T) {
	srv := echoServer(t)
	inR, inW := io.Pipe()
	conn := srv.NewConn(inR, failingWriter{})
	done := make(chan error)
	go func() { done <- conn.Serve(context.Background()) }()
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"echo"}`+"\n")
	if err := <-done; !errors.Is(err, errDiskGone) {
		t.Fatalf("Serve = %v, want the write error", err)
	}
}

func TestServeAfterCloseReturnsAtOnce(t *testing.T) {
	srv := echoServer(t)
	conn := srv.NewConn(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"echo"}`+"\n"), failingWriter{})
	conn.Close()
	if err := conn.Serve(context.Background()); err != nil {
		t.Fatalf("Serve after Close = %v", err)
	}
}
