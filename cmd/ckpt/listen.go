package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/cmd/ckpt/server"
	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/cmdwire"
	"github.com/ckpt/ckpt/internal/localsock"
	"github.com/ckpt/ckpt/internal/lossless"
)

// remoteExit ends a command that a server ran: its output was printed
// as the server produced it and the process exits with the server's code.
type remoteExit struct{ code int }

func (r remoteExit) Error() string { return fmt.Sprintf("the server exited %d", r.code) }

// resident is a listening server's engine and the options it was opened
// with; a client command must ask for the same ones.
type resident struct {
	e           *engine.Engine
	profile     string
	exclude     []string
	maxFileSize int64
}

// serverContext is one forwarded command inside the server.
type serverContext struct {
	res *resident
	cwd string
}

// stopped is the error of a command the server stopped before it
// finished: the same a client reports when the server dies (serverGone).
func (s *serverContext) stopped() error {
	return serverGone{store: s.res.e.StoreDir()}
}

// serverGone is a forwarded command whose server stopped before it
// finished (a signal to the server, or its death).
type serverGone struct {
	store string
	err   error // how the client saw it go; nil in the server
}

func (g serverGone) Error() string {
	msg := fmt.Sprintf("the server of store %s stopped before the command finished", g.store)
	if g.err != nil {
		msg += fmt.Sprintf(" (%v)", g.err)
	}
	return msg + "; run the command again"
}

func (g serverGone) Unwrap() error { return g.err }

// engineFor checks a forwarded command's workspace and returns its engine.
// A command that reads the workspace runs under the global flags it gives
// (--profile, --exclude, --max-file-size; those it leaves out are the
// server's: captureFor), so that it captures what it does cold; the
// timeline page is refused other options than the server's (checkOptions).
// A command that reads only the store (list, show, cat, ...) is
// indifferent to them, as it is cold.
func (s *serverContext) engineFor(a *app, cmd *cobra.Command) (*engine.Engine, error) {
	ws, err := a.workspaceIdentity(s.cwd)
	if err != nil {
		return nil, err
	}
	r := s.res
	if ws != r.e.Workspace() { // as the store itself refuses it, without a server
		return nil, &engine.WorkspaceMismatchError{Store: r.e.StoreDir(), Recorded: r.e.Workspace(), Workspace: ws}
	}
	switch {
	case cmd.Name() == "ui":
		err = r.checkOptions(a.givenOptions(cmd))
	case readsWorkspace(cmd):
		a.capture, err = r.captureFor(a.givenOptions(cmd))
	}
	if err != nil {
		return nil, err
	}
	return r.e, nil
}

// readsWorkspace reports whether cmd's result depends on what the capture
// options include: it saves, restores over or compares against the
// workspace (a diff of two checkpoints, neither the word workspace, and a
// restore of the state only do not).
func readsWorkspace(cmd *cobra.Command) bool {
	switch cmd.Name() {
	case "save":
		return true
	case "restore":
		only, _ := cmd.Flags().GetString("only")
		return only != string(engine.OnlyState)
	case "diff":
		refs := cmd.Flags().Args()
		if at := cmd.ArgsLenAtDash(); at >= 0 {
			refs = refs[:at]
		}
		mode, _ := cmd.Flags().GetString("mode")
		return len(refs) < 2 || mode != "" || slices.ContainsFunc(refs, func(r string) bool { return r == "" || r == engine.WorkspaceRef })
	}
	return false
}

// givenOptions is the capture options a's command line gives (--profile,
// --exclude, --max-file-size), as an attaching client states them: each
// left zero when not given.
func (a *app) givenOptions(cmd *cobra.Command) protocol.CaptureOptions {
	var o protocol.CaptureOptions
	given := func(name string) bool { return cmd.Flags().Changed(name) }
	if given("profile") {
		o.Profile = a.profile
	}
	if given("exclude") {
		o.Exclude = a.exclude
	}
	if given("max-file-size") {
		o.MaxFileSize = effectiveMaxFileSize(a.maxFileSize)
	}
	return o
}

// captureFor is the capture under which the server serves a client that
// gives o (each option left zero is the server's): the engine reads the
// workspace under it, with its watcher when it is the server's own and
// as a cold command would otherwise (engine.Capture). Options that mean
// nothing are refused.
func (r *resident) captureFor(o protocol.CaptureOptions) (*engine.Capture, error) {
	c := engine.Capture{Profile: cmp.Or(o.Profile, r.profile), Exclude: r.exclude, MaxFileSize: cmp.Or(o.MaxFileSize, r.maxFileSize)}
	if o.Exclude != nil {
		c.Exclude = o.Exclude
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// checkOptions refuses a client of the timeline page whose capture
// options (those it gives; the rest are the server's) differ from the
// server's: the page's saves and restores are the server's own.
func (r *resident) checkOptions(o protocol.CaptureOptions) error {
	var differ []string
	if o.Profile != "" && o.Profile != r.profile {
		differ = append(differ, fmt.Sprintf("--profile %s, not %s", r.profile, o.Profile))
	}
	if o.Exclude != nil && !slices.Equal(o.Exclude, r.exclude) {
		differ = append(differ, fmt.Sprintf("--exclude %q, not %q", r.exclude, o.Exclude))
	}
	if o.MaxFileSize != 0 && effectiveMaxFileSize(o.MaxFileSize) != effectiveMaxFileSize(r.maxFileSize) {
		differ = append(differ, fmt.Sprintf("--max-file-size %d, not %d",
			effectiveMaxFileSize(r.maxFileSize), effectiveMaxFileSize(o.MaxFileSize)))
	}
	if len(differ) > 0 {
		return protocol.UsageError(fmt.Sprintf("the server holding store %s runs with %s; stop it or use its options",
			r.e.StoreDir(), strings.Join(differ, ", ")))
	}
	return nil
}

// effectiveMaxFileSize is the cap --max-file-size n means (0: the default).
func effectiveMaxFileSize(n int64) int64 {
	if n == 0 {
		return engine.DefaultMaxFileSize
	}
	return n
}

// listenFlags adds --listen and --idle to the serve command.
func (a *app) listenFlags(serve *cobra.Command) *cobra.Command {
	var listen bool
	var idle time.Duration
	var push string
	serve.Flags().BoolVar(&listen, "listen", false,
		"serve every ckpt command of this store over a socket (a named pipe on Windows) found in the store directory instead of JSON-RPC on stdio")
	serve.Flags().DurationVar(&idle, "idle", 0, "with --listen: stop after this long without a client (0: never)")
	serve.Flags().StringVar(&push, "push", "", "with --listen: push each task to `REMOTE` after every save (retried with backoff; ckpt tasks shows its state)")
	stdio := serve.RunE
	serve.RunE = func(cmd *cobra.Command, args []string) error {
		if !listen {
			if cmd.Flags().Changed("idle") || push != "" {
				return protocol.UsageError("serve: --idle and --push need --listen")
			}
			return stdio(cmd, args)
		}
		if idle < 0 {
			return protocol.UsageError(fmt.Sprintf("--idle %v: want a duration of 0 (never) or more", idle))
		}
		// The server outlives the client that started it, which may stop
		// reading its output: a write to a closed pipe fails instead of
		// ending the server.
		signal.Ignore(syscall.SIGPIPE)
		// A server already listening must serve this command's workspace
		// with its options, or this one fails as a client of it would.
		params, err := a.attachParams(cmd)
		if err != nil {
			return err
		}
		e, err := a.openOrAttach(cmd, func(conn net.Conn) error {
			defer conn.Close()
			_, err := a.attach(conn, params)
			return err
		})
		if e == nil {
			if err == nil {
				a.sayListening("", true)
			}
			return err
		}
		var remote engine.Backend
		err = a.withOpened(e, func(e *engine.Engine) error {
			if push != "" {
				var err error
				if remote, err = startAutoPush(cmd.Context(), e, push); err != nil {
					return err
				}
			}
			defer a.startIdle(cmd.Context(), e)()
			c := a.residentServer(e)
			c.Idle = idle
			c.Listening = func(addr string) { a.sayListening(addr, false) }
			return server.Listen(cmd.Context(), c)
		})
		if remote != nil { // after the engine, which stops pushing at Close
			remote.Close()
		}
		return err
	}
	return serve
}

// residentServer is the store's server on e, which the command opened
// (after startIdle): the commands its clients forward run on e, and its
// JSON-RPC clients attach to e, refused when they need another workspace
// or options than the command's.
func (a *app) residentServer(e *engine.Engine) server.Config {
	res := &resident{e: e, profile: a.profile, exclude: a.exclude, maxFileSize: a.maxFileSize}
	rpc := protocol.NewResident(e, a.session(), a.profile, res.checkAttach)
	return server.Config{StoreDir: e.StoreDir(), Run: res.run, RPC: rpc.Serve, Busy: a.idle.Begin}
}

// sayListening tells where the store's server accepts clients: this
// process, on addr, or (existing) another that already listened, on the
// store's endpoint. With --json it is one line, {"listening": endpoint,
// "store": dir}, which clients starting a server wait for;
// listening_base64 and store_base64 carry their bytes when they are not
// valid UTF-8 (package lossless).
func (a *app) sayListening(addr string, existing bool) {
	store, _ := filepath.Abs(a.store)
	if existing {
		addr = localsock.Endpoint(store)
	}
	switch {
	case a.json:
		a.printJSON(struct {
			Listening       string  `json:"listening"`
			ListeningBase64 *string `json:"listening_base64,omitempty"`
			Store           string  `json:"store"`
			StoreBase64     *string `json:"store_base64,omitempty"`
		}{addr, lossless.Base64(addr), store, lossless.Base64(store)})
	case a.quiet:
	case existing:
		fmt.Fprintf(a.stdout, "a server already listens on %s\n", addr)
	default:
		fmt.Fprintf(a.stdout, "listening on %s\n", addr)
	}
}

// run runs a client's command line in the server, on its engine, with
// the client's environment for what reaches a remote.
func (r *resident) run(ctx context.Context, req cmdwire.Request, stdin io.Reader, stdout, stderr io.Writer) int {
	if req.Env != nil {
		ctx = protocol.WithEnvironment(ctx, req.Env)
	}
	sa := &app{stdin: stdin, stdout: stdout, stderr: stderr, colour: req.Colour, indentJSON: req.Terminal,
		server: &serverContext{res: r, cwd: req.Cwd}}
	if name := commandName(sa, req.Args); name == "serve" || name == "mcp" {
		fmt.Fprintf(stderr, "ckpt: %s cannot run through a server\n", name)
		return protocol.ExitUsage
	}
	return sa.execute(ctx, req.Args, func() {}, func() syscall.Signal { return 0 })
}

// commandName is the name of the subcommand args run, "" when none.
func commandName(a *app, args []string) string {
	cmd, _, err := a.rootCommand().Find(args)
	if err != nil || cmd == nil {
		return ""
	}
	return cmd.Name()
}

// openResident opens the store for a command that serves it (serve, with
// or without --listen, and mcp), unless a server already listens for it:
// then it returns a nil Engine and a connection to that server, so that
// racing starters end with one server. While another process holds the
// store, it waits as openEngine does, looking for a server between
// slices of the wait, and then fails busy naming the holder.
func (a *app) openResident(cmd *cobra.Command) (*engine.Engine, net.Conn, error) {
	if a.store == "" {
		var err error
		if a.store, err = a.defaultStore(); err != nil {
			return nil, nil, err
		}
	}
	e, err := a.open(cmd)
	var found serverFound
	if errors.As(err, &found) {
		return nil, found.conn, nil
	}
	return e, nil, err
}

// openOrAttach opens the store for a command that serves it, as
// openResident does, and returns its engine; or, when a server already
// listens for it, runs client on a connection to that server and returns
// a nil engine and client's error. A server that stops as client reaches
// it (client fails with protocol.ErrNotAttached, before client used it)
// is passed over for the next server, or for opening the store.
func (a *app) openOrAttach(cmd *cobra.Command, client func(net.Conn) error) (*engine.Engine, error) {
	var err error
	for range maxTurnedAway {
		var e *engine.Engine
		var conn net.Conn
		if e, conn, err = a.openResident(cmd); err != nil || e != nil {
			return e, err
		}
		if err = client(conn); !errors.Is(err, protocol.ErrNotAttached) || cmd.Context().Err() != nil {
			return nil, err
		}
	}
	return nil, err
}

// checkAttach refuses a JSON-RPC client that means another workspace or
// gives capture options that mean nothing, and returns the capture its
// requests are served under (captureFor).
func (r *resident) checkAttach(p protocol.AttachParams) (*engine.Capture, error) {
	if p.WorkspaceBase64 != nil {
		ws, err := lossless.Decode("workspace_base64", *p.WorkspaceBase64)
		if err != nil {
			return nil, protocol.UsageError(err.Error())
		}
		p.Workspace = ws
	}
	if p.Workspace != "" || len(p.Roots) > 0 {
		ws, err := attachedWorkspace(p)
		if err != nil {
			return nil, err
		}
		if ws != r.e.Workspace() {
			return nil, fmt.Errorf("%w: the server of store %s serves workspace %s, not %s", engine.ErrWorkspaceMismatch,
				r.e.StoreDir(), r.e.Workspace(), ws)
		}
	}
	return r.captureFor(p.CaptureOptions)
}

// attachedWorkspace is the workspace identity an attaching client means:
// its workspace's canonical path, or its roots' identity.
func attachedWorkspace(p protocol.AttachParams) (string, error) {
	if len(p.Roots) > 0 {
		if p.Workspace != "" {
			return "", protocol.UsageError("attach: give workspace or roots, not both")
		}
		ws, err := engine.RootsWorkspace(p.Roots)
		if err != nil {
			return "", fmt.Errorf("roots: %w", err)
		}
		return ws, nil
	}
	ws, err := filepath.EvalSymlinks(p.Workspace)
	if err != nil {
		return "", protocol.UsageError(fmt.Sprintf("workspace %s: %v", p.Workspace, err))
	}
	return ws, nil
}
