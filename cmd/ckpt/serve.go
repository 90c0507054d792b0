package main

import (
	"github.com/spf13/cobra"

	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/jsonrpc"
)

func (a *app) serveCommand() *cobra.Command {
	return a.watchFlag(&cobra.Command{
		Use:   "serve",
		Short: "Answer JSON-RPC 2.0 requests, one per line on stdin, holding the store open",
		Long: "serve keeps the store open (and locked) for a host process and answers JSON-RPC 2.0\n" +
			"requests, one per line (batches too), concurrently: methods save, list, show, ls, cat, diff,\n" +
			"restore, tasks, drop, gc, verify and stats, with params named like the CLI's flags (allow_empty,\n" +
			"dry_run, ...) and results shaped like their --json output. $/cancelRequest {id} cancels a\n" +
			"request; _meta.progressToken in params asks for $/progress. Events are sent as the\n" +
			"notifications initialize, checkpoint, restore and error. A change watcher keeps saves at the\n" +
			"cost of what changed (--watch=false turns it off).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a.scans = &scanHub{}
			return a.withEngine(cmd, func(e *engine.Engine) error {
				defer a.startIdle(cmd.Context(), e)()
				var conn *jsonrpc.Conn
				notify := func(method string, params any) { _ = conn.Notify(method, params) }
				srv, err := jsonrpc.NewServer(jsonrpc.Options{MapError: rpcError}, hostMethods(a, e, notify)...)
				if err != nil {
					return err
				}
				conn = srv.NewConn(closableInput(a.stdin), a.stdout)
				return conn.Serve(cmd.Context())
			})
		},
	})
}

// watchFlag adds --watch to a command that keeps the store open for a host
// (serve, with or without --listen, and mcp): its engine keeps a change
// watcher on the workspace (engine.Options.Watch) unless --watch=false.
func (a *app) watchFlag(cmd *cobra.Command) *cobra.Command {
	var watch bool
	cmd.Flags().BoolVar(&watch, "watch", true,
		"keep a change watcher on the workspace, so a save re-reads only the directories that changed (false: every save walks the whole workspace)")
	cmd.PreRun = func(*cobra.Command, []string) { a.watch = watch }
	return cmd
}
