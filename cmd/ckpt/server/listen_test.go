package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ckpt/ckpt/internal/cmdwire"
	"github.com/ckpt/ckpt/internal/localsock"
	"github.com/ckpt/ckpt/internal/testbound"
)

// Listen hands each client's command line, input and cwd to Run, streams
// its output back with its exit code, counts each command as busy, and
// removes its endpoint when its context ends.
func TestListenRunsForwardedCommands(t *testing.T) {
	store := t.TempDir()
	addr := make(chan string, 1)
	var busy, ended atomic.Int32
	run := func(_ context.Context, req cmdwire.Request, stdin io.Reader, stdout, stderr io.Writer) int {
		in, _ := io.ReadAll(stdin)
		fmt.Fprintf(stdout, "%s in %s: %s", strings.Join(req.Args, " "), req.Cwd, in)
		fmt.Fprint(stderr, "a warning")
		return 6
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- Listen(ctx, Config{StoreDir: store,
			Listening: func(a string) { addr <- a }, Run: run,
			Busy: func() func() { busy.Add(1); return func() { ended.Add(1) } }})
	}()
	if got := <-addr; got != localsock.Endpoint(store) {
		t.Errorf("listening on %s, want %s", got, localsock.Endpoint(store))
	}
	for i := range 2 {
		conn, err := localsock.Dial(store)
		if err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		code, err := cmdwire.Exchange(conn, cmdwire.Request{Args: []string{"save", "-m", "x"}, Cwd: "/w", Stdin: []byte("state")}, time.Time{}, &stdout, &stderr)
		conn.Close()
		if err != nil || code != 6 || stdout.String() != "save -m x in /w: state" || stderr.String() != "a warning" {
			t.Fatalf("command %d: exit %d, %v; stdout %q, stderr %q", i, code, err, stdout.String(), stderr.String())
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if busy.Load() != 2 || ended.Load() != 2 {
		t.Errorf("busy began %d and ended %d times for 2 commands", busy.Load(), ended.Load())
	}
	if _, err := localsock.Dial(store); err == nil {
		t.Error("the endpoint still answers after Listen returned")
	}
}

// With Idle set and no client, Listen returns after that long.
func TestListenStopsWhenIdle(t *testing.T) {
	start := time.Now()
	err := Listen(context.Background(), Config{StoreDir: t.TempDir(), Idle: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("Listen returned after %v, before its idle period", d)
	}
}

// A server whose endpoint is removed, or was a file that is not an
// endpoint to begin with, serves on a new one: nobody is locked out while
// it holds the store.
func TestListenRecreatesItsEndpoint(t *testing.T) {
	store := t.TempDir()
	if err := os.WriteFile(localsock.Endpoint(store), []byte("not an endpoint"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(_ context.Context, req cmdwire.Request, _ io.Reader, stdout, _ io.Writer) int {
		fmt.Fprint(stdout, strings.Join(req.Args, " "))
		return 0
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	listening := make(chan struct{})
	go func() {
		done <- Listen(ctx, Config{StoreDir: store, Run: run, Listening: func(string) { close(listening) }})
	}()
	select {
	case <-listening:
	case err := <-done:
		t.Fatalf("Listen over a regular file at the endpoint: %v", err)
	}
	call := func() error {
		conn, err := localsock.Dial(store)
		if err != nil {
			return err
		}
		defer conn.Close()
		var out bytes.Buffer
		if code, err := cmdwire.Exchange(conn, cmdwire.Request{Args: []string{"list"}}, time.Time{}, &out, io.Discard); err != nil || code != 0 || out.String() != "list" {
			return fmt.Errorf("exit %d, %v, %q", code, err, out.String())
		}
		return nil
	}
	if err := call(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(localsock.Endpoint(store)); err != nil {
		t.Fatal(err)
	}
	testbound.Until(t, "the server answers on a new endpoint", func() bool { return call() == nil })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(localsock.Endpoint(store)); !os.IsNotExist(err) {
		t.Fatalf("the endpoint outlived the server: %v", err)
	}
}

// A client that reaches a server as its idle period expires gets its
// command run, or learns that it was not (cmdwire.ErrNotRun, or no
// endpoint to dial): never a command cut short by the server's stop. A
// client turned away finds the endpoint gone when it dials again. The
// idle periods are short enough for the expiry to race each client.
func TestClientsRacingTheIdleExpiryAreRunOrTurnedAway(t *testing.T) {
	store := t.TempDir()
	run := func(ctx context.Context, _ cmdwire.Request, _ io.Reader, stdout, stderr io.Writer) int {
		if ctx.Err() != nil {
			fmt.Fprint(stderr, "stopped")
			return 1
		}
		fmt.Fprint(stdout, "ran")
		return 0
	}
	var ran, turned int
	for i := range 300 {
		listening := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			done <- Listen(context.Background(), Config{StoreDir: store, Idle: time.Duration(1+i%7) * 50 * time.Microsecond,
				Run: run, Listening: func(string) { close(listening) }})
		}()
		<-listening
		if conn, err := localsock.Dial(store); err == nil {
			var out, errOut bytes.Buffer
			code, err := cmdwire.Exchange(conn, cmdwire.Request{Args: []string{"save"}}, time.Time{}, &out, &errOut)
			conn.Close()
			switch {
			case errors.Is(err, cmdwire.ErrNotRun):
				turned++
				if again, err := localsock.Dial(store); err == nil {
					again.Close()
					t.Fatalf("client %d: the server that turned it away still answers on its endpoint", i)
				}
			case err == nil && code == 0 && out.String() == "ran":
				ran++
			default:
				t.Fatalf("client %d: exit %d, %v, stdout %q, stderr %q; want its command run or turned away", i, code, err, out.String(), errOut.String())
			}
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d commands ran, %d turned away", ran, turned)
}

// A server that is stopping runs nothing a client sends it, a command or
// a JSON-RPC connection, and says nothing back.
func TestAStoppingServerRunsNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := 0
	c := Config{
		Run: func(context.Context, cmdwire.Request, io.Reader, io.Writer, io.Writer) int { called++; return 0 },
		RPC: func(context.Context, io.Reader, io.Writer) error { called++; return nil },
	}
	for _, line := range []string{`{"args":["save"]}`, `{"jsonrpc":"2.0","id":1,"method":"attach"}`} {
		var out bytes.Buffer
		served := serveConn(ctx, c, struct {
			io.Reader
			io.Writer
		}{strings.NewReader(line + "\n"), &out})
		if served || called != 0 || out.Len() != 0 {
			t.Fatalf("a stopping server given %s ran %d handlers, answered %q and says it served the client: %v", line, called, out.String(), served)
		}
	}
}
