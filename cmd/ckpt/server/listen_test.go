package server

import (
	"bytes"
	"context"
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
		code, err := cmdwire.Exchange(conn, cmdwire.Request{Args: []string{"save", "-m", "x"}, Cwd: "/w", Stdin: []byte("state")}, &stdout, &stderr)
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
		if code, err := cmdwire.Exchange(conn, cmdwire.Request{Args: []string{"list"}}, &out, io.Discard); err != nil || code != 0 || out.String() != "list" {
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
