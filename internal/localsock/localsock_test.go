package localsock

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/testbound"
)

// bound is how long any step may take before the test calls it a hang.
const bound = testbound.Hang

// echo serves ln until it closes: each connection gets its lines back,
// prefixed, until the client closes it.
func echo(ln net.Listener) *sync.WaitGroup {
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				r := bufio.NewScanner(c)
				for r.Scan() {
					fmt.Fprintf(c, "echo %s\n", r.Text())
				}
			})
		}
	})
	return &wg
}

func TestClientsTalkToTheServer(t *testing.T) {
	dir := t.TempDir()
	ln, err := Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(Endpoint(dir)); err != nil {
		t.Fatalf("no endpoint while listening: %v", err)
	}
	served := echo(ln)
	var clients sync.WaitGroup
	for i := range 4 {
		clients.Go(func() {
			c, err := Dial(dir)
			if err != nil {
				t.Errorf("client %d: %v", i, err)
				return
			}
			defer c.Close()
			r := bufio.NewReader(c)
			for j := range 50 {
				fmt.Fprintf(c, "%d.%d\n", i, j)
				line, err := r.ReadString('\n')
				if want := fmt.Sprintf("echo %d.%d\n", i, j); err != nil || line != want {
					t.Errorf("client %d got %q (%v), want %q", i, line, err, want)
					return
				}
			}
		})
	}
	testbound.Within(t, bound, clients.Wait)
	ln.Close()
	testbound.Within(t, bound, served.Wait)
	if _, err := os.Stat(Endpoint(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("endpoint left after Close: %v", err)
	}
	if c, err := Dial(dir); !errors.Is(err, ErrNoServer) {
		t.Fatalf("Dial after Close = %v, %v; want ErrNoServer", c, err)
	}
}

func TestDialWithoutServerIsNoServer(t *testing.T) {
	if _, err := Dial(t.TempDir()); !errors.Is(err, ErrNoServer) {
		t.Fatalf("Dial = %v, want ErrNoServer", err)
	}
}

// Close ends an Accept that is waiting for a client.
func TestCloseEndsAPendingAccept(t *testing.T) {
	ln, err := Listen(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			c.Close()
		}
		accepted <- err
	}()
	ln.Close()
	testbound.Within(t, bound, func() {
		if err := <-accepted; !errors.Is(err, net.ErrClosed) {
			t.Errorf("Accept after Close = %v, want net.ErrClosed", err)
		}
	})
}

// A server learns that its client left: a pending Read ends with EOF
// when the client closes its end, and closing the server's end ends the
// client's Read.
func TestEitherSideSeesTheOtherLeave(t *testing.T) {
	dir := t.TempDir()
	ln, err := Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	conns := make(chan net.Conn, 2)
	go func() {
		for range 2 {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns <- c
		}
	}()
	for _, clientLeaves := range []bool{true, false} {
		client, err := Dial(dir)
		if err != nil {
			t.Fatal(err)
		}
		server := <-conns
		leaver, stayer := server, client
		if clientLeaves {
			leaver, stayer = client, server
		}
		read := make(chan error, 1)
		go func() {
			_, err := io.ReadAll(stayer)
			read <- err
		}()
		leaver.Close()
		testbound.Within(t, bound, func() {
			if err := <-read; err != nil {
				t.Errorf("client leaves %v: read = %v, want EOF", clientLeaves, err)
			}
		})
		stayer.Close()
	}
}

// Closing a connection ends its own pending Read with net.ErrClosed, as a
// socket does, on every platform, and later reads and writes fail the same.
func TestCloseEndsAPendingReadWithErrClosed(t *testing.T) {
	dir := t.TempDir()
	ln, err := Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			defer c.Close()
			io.Copy(io.Discard, c)
		}
	}()
	c, err := Dial(dir)
	if err != nil {
		t.Fatal(err)
	}
	read := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 1))
		read <- err
	}()
	c.Close()
	testbound.Within(t, bound, func() {
		if err := <-read; !errors.Is(err, net.ErrClosed) {
			t.Errorf("pending Read after Close = %v, want net.ErrClosed", err)
		}
	})
	if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Write after Close = %v, want net.ErrClosed", err)
	}
}

// An endpoint left by a server that died is not taken for a server:
// Dial says there is none and removes it, and a new server replaces it.
func TestStaleEndpointIsNoServerAndReplaced(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, lockName), nil, 0o600); err != nil { // a store's lock, free
		t.Fatal(err)
	}
	leaveStaleEndpoint(t, dir)
	if _, err := Dial(dir); !errors.Is(err, ErrNoServer) {
		t.Fatalf("Dial of a stale endpoint = %v, want ErrNoServer", err)
	}
	if _, err := os.Lstat(Endpoint(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stale endpoint not removed: %v", err)
	}
	leaveStaleEndpoint(t, dir)
	ln, err := Listen(dir)
	if err != nil {
		t.Fatalf("Listen over a stale endpoint: %v", err)
	}
	defer ln.Close()
	echo(ln)
	c, err := Dial(dir)
	if err != nil {
		t.Fatalf("Dial of the new server: %v", err)
	}
	c.Close()
}

// An endpoint that refuses a client is removed only when it is provably
// stale: while a process holds the store's lock (as a server does while
// it listens, and before it listens) it stays, for it may be that
// process's, put there after the client found a dead server's; once the
// lock is free, it goes.
func TestRefusingEndpointStaysWhileTheStoreIsLocked(t *testing.T) {
	ws, store := t.TempDir(), t.TempDir()
	e, err := engine.Open(context.Background(), ws, engine.Options{StoreDir: store})
	if err != nil {
		t.Fatal(err)
	}
	leaveStaleEndpoint(t, store)
	if _, err := Dial(store); !errors.Is(err, ErrNoServer) {
		t.Fatalf("Dial of a refusing endpoint = %v, want ErrNoServer", err)
	}
	if _, err := os.Lstat(Endpoint(store)); err != nil {
		t.Fatalf("endpoint removed while a process holds the store's lock: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Dial(store); !errors.Is(err, ErrNoServer) {
		t.Fatalf("Dial of a stale endpoint = %v, want ErrNoServer", err)
	}
	if _, err := os.Lstat(Endpoint(store)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stale endpoint not removed once the store's lock is free: %v", err)
	}
}
