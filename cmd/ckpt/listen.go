package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/cmd/ckpt/server"
	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/cmdwire"
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

// engineFor checks a forwarded command's global flags against the
// server's and returns its engine.
func (s *serverContext) engineFor(a *app) (*engine.Engine, error) {
	if !filepath.IsAbs(a.workspace) {
		a.workspace = filepath.Join(s.cwd, a.workspace)
	}
	if err := a.checkGlobalFlags(); err != nil {
		return nil, err
	}
	r := s.res
	ws, err := filepath.EvalSymlinks(a.workspace)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", a.workspace, err)
	}
	if ws != r.e.Workspace() || a.profile != r.profile || !slices.Equal(a.exclude, r.exclude) || a.maxFileSize != r.maxFileSize {
		return nil, protocol.UsageError(fmt.Sprintf("the server holding store %s serves workspace %s with other options "+
			"(--profile, --exclude, --max-file-size); stop it or use its options", r.e.StoreDir(), r.e.Workspace()))
	}
	return r.e, nil
}

// listenFlags adds --listen and --idle to the serve command.
func (a *app) listenFlags(serve *cobra.Command) *cobra.Command {
	var listen bool
	var idle time.Duration
	var push string
	serve.Flags().BoolVar(&listen, "listen", false,
		"serve every ckpt command of this store over a socket (a named pipe on Windows) found in the store directory instead of JSON-RPC on stdio")
	serve.Flags().DurationVar(&idle, "idle", 0, "with --listen: stop after this long without a client (0: never)")
	serve.Flags().StringVar(&push, "push", "", "with --listen: push each task to this remote after every save (retried with backoff; state in `ckpt tasks`)")
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
		var remote engine.Backend
		err := a.withEngine(cmd, func(e *engine.Engine) error {
			if push != "" {
				var err error
				if remote, err = startAutoPush(cmd.Context(), e, push); err != nil {
					return err
				}
			}
			defer a.startIdle(cmd.Context(), e)()
			res := &resident{e: e, profile: a.profile, exclude: a.exclude, maxFileSize: a.maxFileSize}
			return server.Listen(cmd.Context(), server.Config{StoreDir: e.StoreDir(), Idle: idle,
				Listening: a.sayListening, Run: res.run, Busy: a.idle.Begin})
		})
		if remote != nil { // after the engine, which stops pushing at Close
			remote.Close()
		}
		return err
	}
	return serve
}

// sayListening tells the endpoint a listening server accepts clients on.
func (a *app) sayListening(addr string) {
	if a.json {
		a.printJSON(struct {
			Listening string `json:"listening"`
		}{addr})
	} else if !a.quiet {
		fmt.Fprintf(a.stdout, "listening on %s\n", addr)
	}
}

// run runs a client's command line in the server, on its engine.
func (r *resident) run(ctx context.Context, req cmdwire.Request, stdin io.Reader, stdout, stderr io.Writer) int {
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
