package main

import (
	"context"
	"errors"
	"net"

	"github.com/spf13/cobra"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/cmd/ckpt/server"
	"github.com/ckpt/ckpt/engine"
)

func (a *app) serveCommand() *cobra.Command {
	return a.watchFlag(&cobra.Command{
		Use:   "serve",
		Short: "Answer JSON-RPC 2.0 requests, one per line on stdin, holding the store open",
		Long: "serve keeps the store open for a host process and answers JSON-RPC 2.0\n" +
			"requests, one per line (batches too), concurrently: methods save, list, show, ls, cat, diff,\n" +
			"restore, tasks, drop, gc, verify and stats, with params named like the CLI's flags (allow_empty,\n" +
			"dry_run, ...) and results shaped like their --json output. $/cancelRequest {id} cancels a\n" +
			"request; _meta.progressToken in params asks for $/progress. Events are sent as the\n" +
			"notifications initialize, checkpoint, restore and error. A change watcher keeps saves at the\n" +
			"cost of what changed (--watch=false turns it off); a change it missed, found by the periodic\n" +
			"re-verification, is sent to every client as missedChanges {paths, duration}.\n\n" +
			"Its requests run on the store's server: when one runs (serve --listen, or another serve or mcp),\n" +
			"serve attaches to it; otherwise serve opens the store and becomes its server, listening for other\n" +
			"clients as serve --listen does until its input ends. Either way its requests run on one engine\n" +
			"beside every other client's (adapters, the CLI, ckpt ui), and it gets the events of its --task\n" +
			"and of the tasks it saves or restores, whichever client caused them.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// A serve that is the store's server answers its host on
			// stdio itself, as a client of its own server whose
			// default task is --task (a.session): a relay to itself would
			// copy and scan every line again (a diff's reply carries both
			// sides of every file).
			return a.serveHost(cmd, func(conn net.Conn) error { return a.relay(cmd, conn) },
				func(srv server.Config) error { return srv.RPC(cmd.Context(), a.stdin, a.stdout) })
		},
	})
}

func (a *app) mcpCommand() *cobra.Command {
	return a.watchFlag(&cobra.Command{
		Use:   "mcp",
		Short: "Run a Model Context Protocol server on stdio exposing ckpt's checkpoints as tools",
		Long: "mcp serves every operation of serve as the tool ckpt_<name> (annotated read-only or\n" +
			"destructive), with progress for _meta.progressToken, cancellation and structured output.\n" +
			"Events (initialize, checkpoint, restore, error, missedChanges) are sent as log messages of the\n" +
			"logger \"ckpt\".\n" +
			"A change watcher keeps saves at the cost of what changed (--watch=false turns it off).\n\n" +
			"Its tool calls run on the store's server: when one runs (serve --listen, or a serve or another\n" +
			"mcp), mcp attaches to it and ends if that server stops; otherwise mcp opens the store and becomes\n" +
			"its server, listening for other clients as serve --listen does until its MCP client goes. Either\n" +
			"way each tool call runs on one engine beside every other client's (adapters, the CLI, ckpt ui),\n" +
			"and its events are those of its --task and of the tasks it saves or restores.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			session := func(conn net.Conn) error {
				defer conn.Close()
				params, err := a.attachParams(cmd)
				if err != nil {
					return err
				}
				err = protocol.ServeMCPAttached(cmd.Context(), conn, params, a.answerDeadline(), version, a.stdin, a.stdout)
				if errors.Is(err, protocol.ErrAttachUnanswered) {
					return serverUnanswered{a.store, a.serverAnswerWait()}
				}
				return err
			}
			return a.serveHost(cmd, session, func(srv server.Config) error { return overPipe(cmd.Context(), srv, session) })
		},
	})
}

// session is what the host methods of serve and mcp share: the --task, the
// scan progress and the idle recompression they pause.
func (a *app) session() protocol.Session {
	return protocol.Session{Task: a.task, Scans: a.scans, Busy: a.idle.Begin, Store: a.storeEvents}
}

// startIdle starts recompressing e's deferred packs while the resident
// command's requests leave it idle (a.idle); the returned function stops it.
func (a *app) startIdle(ctx context.Context, e *engine.Engine) (stop func()) {
	a.idle = server.NewRecompressor(e)
	return a.idle.Start(ctx)
}

// watchFlag adds --watch to a command that keeps the store open for a host
// (serve, with or without --listen, and mcp): its engine keeps a change
// watcher on the workspace (engine.Options.Watch) unless --watch=false,
// and what its re-verifications find reaches every client (storeEvents).
func (a *app) watchFlag(cmd *cobra.Command) *cobra.Command {
	var watch bool
	cmd.Flags().BoolVar(&watch, "watch", true,
		"keep a change watcher on the workspace, so a save re-reads only the directories that changed (false: every save walks the whole workspace)")
	cmd.PreRun = func(*cobra.Command, []string) { a.watch, a.storeEvents = watch, &protocol.StoreEvents{} }
	return cmd
}
