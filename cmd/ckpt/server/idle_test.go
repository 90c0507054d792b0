package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/localsock"
	"github.com/ckpt/ckpt/internal/testbound"
)

// sliceOutcome is what one slice of an Recompressor returned.
type sliceOutcome struct {
	res *engine.RecompressResult
	err error
}

// deferredMarks counts a store's deferred-pack markers.
func deferredMarks(t *testing.T, store string) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(store, "packs", "*.raw"))
	if err != nil {
		t.Fatal(err)
	}
	return len(m)
}

// TestIdleRecompressionYieldsToRequests starts a resident engine's idle
// recompression on a store whose first save deferred compression, holds
// its first slice until a request begins, and checks that the request's
// begin cancels that slice (it returns context.Canceled and the pack stays
// marked), that the engine answers the request meanwhile, and that once
// the request ends recompression resumes and leaves no deferred pack and
// a store that verifies.
func TestIdleRecompressionYieldsToRequests(t *testing.T) {
	e, store := deferredFirstSave(t, 40)
	marks := deferredMarks(t, store)

	r := NewRecompressor(e)
	r.quiet = 0
	real := r.slice
	held := make(chan struct{})
	outcomes := make(chan sliceOutcome, 64)
	first := true
	r.slice = func(ctx context.Context) (*engine.RecompressResult, error) {
		if first { // the loop runs one slice at a time
			first = false
			close(held)
			<-ctx.Done()
		}
		res, err := real(ctx)
		outcomes <- sliceOutcome{res, err}
		return res, err
	}
	stop := r.Start(context.Background())
	defer stop()

	<-held
	end := r.Begin()
	if o := <-outcomes; !errors.Is(o.err, context.Canceled) {
		t.Fatalf("the held slice returned %+v, %v; want context.Canceled", o.res, o.err)
	}
	if got := deferredMarks(t, store); got != marks {
		t.Fatalf("a cancelled slice left %d marks, want %d", got, marks)
	}
	if log, err := e.List(context.Background(), engine.DefaultTask); err != nil || len(log.Checkpoints) != 1 {
		t.Fatalf("request during recompression: %v, %v", log, err)
	}
	end()
	for o := range outcomes {
		if o.err != nil {
			t.Fatalf("slice after the request: %v", o.err)
		}
		if o.res.Remaining == 0 {
			break
		}
	}
	stop()
	if got := deferredMarks(t, store); got != 0 {
		t.Fatalf("%d deferred packs left after idle recompression", got)
	}
	if rep, err := e.Verify(context.Background(), engine.VerifyOptions{}); err != nil {
		t.Fatalf("verify: %v %+v", err, rep)
	}
}

// A JSON-RPC client attached to the server (an attached serve or mcp,
// which stays connected for a whole agent session) leaves it idle between
// its requests: the protocol counts each request as busy, and the server
// does not count the connection itself, so the first save's deferred
// packs are compressed while the client stays attached.
func TestIdleRecompressionRunsWhileAClientStaysAttached(t *testing.T) {
	e, store := deferredFirstSave(t, 8)
	r := NewRecompressor(e)
	r.quiet = 0
	ctx, cancel := context.WithCancel(context.Background())
	listening, attached := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- Listen(ctx, Config{StoreDir: store, Busy: r.Begin,
			Listening: func(string) { close(listening) },
			RPC: func(ctx context.Context, _ io.Reader, _ io.Writer) error {
				close(attached)
				<-ctx.Done() // an attached client that sends no request
				return nil
			}})
	}()
	defer func() { cancel(); <-done }()
	<-listening
	defer attachTo(t, store).Close()
	<-attached
	defer r.Start(ctx)() // only now: what it does, it does with the client attached
	testbound.Until(t, "the deferred packs are compressed", func() bool { return deferredMarks(t, store) == 0 })
}

// deferredFirstSave opens an engine on a workspace of files source files
// of some 50 KB each, with DeferCompression, and saves it once: its packs
// wait for recompression. The engine closes with the test.
func deferredFirstSave(t *testing.T, files int) (*engine.Engine, string) {
	t.Helper()
	ws, store := t.TempDir(), filepath.Join(t.TempDir(), "store")
	for i := range files {
		content := strings.Repeat(fmt.Sprintf("line %d of a source file\n", i), 2000)
		if err := os.WriteFile(filepath.Join(ws, fmt.Sprintf("f%02d.txt", i)), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e, err := engine.Open(context.Background(), ws, engine.Options{StoreDir: store, DeferCompression: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if _, err := e.Save(context.Background(), engine.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	if deferredMarks(t, store) == 0 {
		t.Fatal("the first save deferred no pack")
	}
	return e, store
}

// attachTo connects to the server of store and sends it an attach request.
func attachTo(t *testing.T, store string) net.Conn {
	t.Helper()
	conn, err := localsock.Dial(store)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(conn, `{"jsonrpc":"2.0","id":1,"method":"attach"}`)
	return conn
}
