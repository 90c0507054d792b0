package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/ckpt/ckpt/internal/cmdwire"
	"github.com/ckpt/ckpt/internal/localsock"
)

// Command runs one forwarded command line (req.Args, in req.Cwd) with the
// given streams and returns its exit code; ctx ends when the client goes
// away.
type Command func(ctx context.Context, req cmdwire.Request, stdin io.Reader, stdout, stderr io.Writer) int

// Config is what Listen serves.
type Config struct {
	// StoreDir is the store whose endpoint is listened on.
	StoreDir string
	// Idle, when > 0, stops the server after this long without a client.
	Idle time.Duration
	// Listening is told the endpoint's address once it accepts clients.
	Listening func(addr string)
	// Run runs each client's command.
	Run Command
	// RPC serves a client that speaks JSON-RPC (see serveConn) until in
	// ends or ctx is cancelled; nil refuses such clients.
	RPC func(ctx context.Context, in io.Reader, out io.Writer) error
	// Busy, when set, is called as each forwarded command starts; the
	// command calls the function it returns when it ends. A JSON-RPC
	// client is not busy while connected, only while RPC runs a request
	// of it (RPC counts those itself), so a client that stays attached
	// leaves the server idle between its requests.
	Busy func() (end func())
}

// ErrStopped is the cause (context.Cause) of the cancellation of the
// commands and requests a server was running when it stopped: its context
// ended (a signal), it was idle, or its endpoint failed.
var ErrStopped = errors.New("the server stopped")

// Listen serves forwarded commands and JSON-RPC clients on the store's
// endpoint (see package localsock) until ctx ends, until its endpoint
// fails (it cannot accept, or cannot re-create an endpoint that is gone:
// Listen returns that error) or, with c.Idle > 0, until no client has
// been connected for c.Idle. The endpoint is removed on return. The
// commands and requests running then are cancelled with the cause
// ErrStopped, and Listen returns once they have answered.
func Listen(parent context.Context, c Config) error {
	ln, err := localsock.Listen(c.StoreDir)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	defer cancel(nil)
	stop := func() { cancel(ErrStopped) }
	defer context.AfterFunc(parent, stop)()
	act := newActivity(c.Idle, stop)
	defer act.stop()
	if c.Listening != nil {
		c.Listening(ln.Addr().String())
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	ep := &endpoint{store: c.StoreDir, ln: ln, failed: make(chan error, 1)}
	handle := func(conn net.Conn) {
		act.begin()
		wg.Go(func() {
			defer act.end()
			defer conn.Close()
			if !serveConn(ctx, c, conn) {
				// Turned away: the endpoint goes before the connection
				// does, so that the client's next dial finds no server
				// here.
				ep.close()
			}
		})
	}
	go ep.accept(ln, handle)
	t := time.NewTicker(endpointCheck)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			ep.close()
			return nil
		case err := <-ep.failed:
			ep.close()
			stop() // cancel what runs: a server with no endpoint must not keep the store
			return err
		case <-t.C:
			ep.renew(handle)
		}
	}
}

// endpointCheck is how often a server checks that its endpoint is still
// there: one removed (or replaced by another file) would leave every
// client out while the server holds the store's lock.
const endpointCheck = time.Second

// endpoint is a server's listener, which renew replaces when its endpoint
// is gone.
type endpoint struct {
	store  string
	failed chan error // the first accept or renewal failure
	mu     sync.Mutex
	ln     net.Listener // the current listener
	closed bool
}

// accept hands each connection of ln to handle until ln is closed; none
// after close.
func (p *endpoint) accept(ln net.Listener, handle func(net.Conn)) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			p.mu.Lock()
			current := ln == p.ln && !p.closed
			p.mu.Unlock()
			if current {
				p.fail(fmt.Errorf("accept: %w", err))
			}
			return
		}
		p.mu.Lock()
		if p.closed { // the server stops: it takes no more clients
			p.mu.Unlock()
			conn.Close()
			return
		}
		handle(conn)
		p.mu.Unlock()
	}
}

// renew re-creates the endpoint when it is gone (see localsock.Renew).
func (p *endpoint) renew(handle func(net.Conn)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	ln, err := localsock.Renew(p.store, p.ln)
	switch {
	case err != nil:
		p.closed = true
		p.fail(fmt.Errorf("re-create the endpoint: %w", err))
	case ln != nil:
		p.ln = ln
		go p.accept(ln, handle)
	}
}

func (p *endpoint) fail(err error) {
	select {
	case p.failed <- err:
	default:
	}
}

// close closes the current listener, which removes the endpoint.
func (p *endpoint) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.closed = true
		p.ln.Close()
	}
}

// serveConn serves one client: JSON-RPC when its first line is not a
// command request (see cmdwire.IsRequest), else the one command it sends,
// which it accepts and whose output it streams back (see package cmdwire).
// The command's context ends when the client goes away. A server that
// stops (ctx ended) answers nothing, and a client that reached it as it
// stopped knows that its command or attach did not run: a client counts
// as connected (Listen's handle) before it is read, so the idle expiry comes
// either before that client, and ctx has ended here, or not until it
// leaves. It returns false when it turned the client away.
func serveConn(ctx context.Context, c Config, conn io.ReadWriter) bool {
	r := bufio.NewReader(conn)
	line, err := r.ReadBytes('\n')
	if err != nil {
		return true
	}
	if ctx.Err() != nil {
		return false
	}
	if !cmdwire.IsRequest(line) {
		if c.RPC != nil {
			_ = c.RPC(ctx, io.MultiReader(bytes.NewReader(line), r), conn)
		}
		return true
	}
	req, err := cmdwire.DecodeRequest(line)
	if err != nil {
		return true
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { // the client sends nothing more: EOF or an error means it left
		io.Copy(io.Discard, r)
		cancel()
	}()
	frames := cmdwire.NewFrames(conn)
	if frames.Accept() != nil {
		return true
	}
	// Busy after the accept frame: it waits for the recompression slice in
	// flight to stop, and the client gives the server only so long to
	// accept (cmdwire.Exchange).
	if c.Busy != nil { // the command's, not the connection's: see Config.Busy
		defer c.Busy()()
	}
	frames.Exit(c.Run(ctx, req, bytes.NewReader(req.Stdin), frames.Stdout(), frames.Stderr()))
	return true
}
