package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"syscall"
	"time"

	"github.com/ckpt/ckpt/internal/cmdwire"
	"github.com/ckpt/ckpt/internal/localsock"
)

// listen serves forwarded commands on the store's endpoint (see package
// localsock) until ctx ends or, with idle > 0, until no client has been
// connected for idle. The endpoint is removed on return.
func (a *app) listen(ctx context.Context, res *resident, idle time.Duration) error {
	ln, err := localsock.Listen(res.e.StoreDir())
	if err != nil {
		return err
	}
	defer ln.Close()
	path := ln.Addr().String()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	act := newActivity(idle, cancel)
	defer act.stop()
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	if a.json {
		a.printJSON(struct {
			Listening string `json:"listening"`
		}{path})
	} else if !a.quiet {
		fmt.Fprintf(a.stdout, "listening on %s\n", path)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("accept: %w", err)
		}
		act.begin()
		wg.Go(func() {
			defer act.end()
			defer a.idle.begin()()
			defer conn.Close()
			serveConn(ctx, res, conn)
		})
	}
}

// serveConn runs the one command a client sends and streams its output
// back (see package cmdwire). The command's context ends when the client
// goes away.
func serveConn(ctx context.Context, res *resident, conn io.ReadWriter) {
	r := bufio.NewReader(conn)
	req, err := cmdwire.ReadRequest(r)
	if err != nil {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { // the client sends nothing more: EOF or an error means it left
		io.Copy(io.Discard, r)
		cancel()
	}()
	frames := cmdwire.NewFrames(conn)
	sa := &app{stdin: bytes.NewReader(req.Stdin), stdout: frames.Stdout(), stderr: frames.Stderr(),
		colour: req.Colour, indentJSON: req.Terminal, server: &serverContext{res: res, cwd: req.Cwd}}
	code := exitUsage
	if name := commandName(sa, req.Args); name == "serve" || name == "mcp" {
		fmt.Fprintf(sa.stderr, "ckpt: %s cannot run through a server\n", name)
	} else {
		code = sa.execute(ctx, req.Args, func() {}, func() syscall.Signal { return 0 })
	}
	frames.Exit(code)
}

// commandName is the name of the subcommand args run, "" when none.
func commandName(a *app, args []string) string {
	cmd, _, err := a.rootCommand().Find(args)
	if err != nil || cmd == nil {
		return ""
	}
	return cmd.Name()
}

// activity ends an idle server: the timer runs while no client is connected.
type activity struct {
	mu     sync.Mutex
	n      int
	idle   time.Duration
	timer  *time.Timer // nil when idle is 0
	expire func()
}

func newActivity(idle time.Duration, expire func()) *activity {
	a := &activity{idle: idle, expire: expire}
	if idle > 0 {
		a.timer = time.AfterFunc(idle, expire)
	}
	return a
}

func (a *activity) begin() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.n++
	if a.timer != nil {
		a.timer.Stop()
	}
}

func (a *activity) end() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.n--
	if a.n == 0 && a.timer != nil {
		a.timer.Reset(a.idle)
	}
}

func (a *activity) stop() {
	if a.timer != nil {
		a.timer.Stop()
	}
}
