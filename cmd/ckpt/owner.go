package main

import (
	"context"
	"net"

	"github.com/spf13/cobra"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/cmd/ckpt/server"
	"github.com/ckpt/ckpt/engine"
)

// serveHost serves a host on stdio (serve's JSON-RPC, mcp's MCP server)
// as a client of the store's server.
//
// When a server listens for the store, attached runs on a connection to
// it (serve's relay, mcp's attached MCP server). When none does, this
// process becomes the store's server: it opens the store (waiting for its
// lock as openResident does), listens on the store's endpoint for as long
// as the host is served, exactly as serve --listen does (forwarded
// commands and JSON-RPC clients, each on the engine it opened), and runs
// owned with that server. So every later client of the store (a CLI
// command, ckpt ui, an adapter, another serve or mcp) attaches to it
// instead of waiting for the lock, and events reach the clients of their
// task whichever client caused them. When owned returns (the host closed
// stdin or went away), the endpoint is removed, then the commands and
// requests other clients still run are stopped as when serve --listen
// stops.
func (a *app) serveHost(cmd *cobra.Command, attached func(conn net.Conn) error, owned func(srv server.Config) error) error {
	if err := a.checkGlobalFlags(); err != nil {
		return err
	}
	a.scans = &protocol.ScanHub{}
	e, err := a.openOrAttach(cmd, attached)
	if e == nil {
		return err
	}
	return a.withOpened(e, func(e *engine.Engine) error {
		defer a.startIdle(cmd.Context(), e)()
		srv := a.residentServer(e)
		stopListening := a.listenBeside(cmd.Context(), srv)
		defer stopListening()
		return owned(srv)
	})
}

// overPipe runs session on an in-process connection to srv, as it would
// run on a connection to another process's server, and returns once srv
// has finished with it.
func overPipe(ctx context.Context, srv server.Config, session func(conn net.Conn) error) error {
	client, own := net.Pipe()
	served := make(chan struct{})
	go func() {
		defer close(served)
		defer own.Close()
		_ = srv.RPC(ctx, own, own)
	}()
	err := session(client)
	client.Close()
	<-served
	return err
}

// listenBeside serves c on the store's endpoint, from once it returns
// until stop is called. An endpoint that cannot be created (or re-created
// later) leaves the store to this process alone: a notice says so, and
// other clients wait for the store's lock as they would for any command.
func (a *app) listenBeside(ctx context.Context, c server.Config) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	listening, ended := make(chan struct{}), make(chan struct{})
	c.Listening = func(string) { close(listening) }
	go func() {
		defer close(ended)
		if err := server.Listen(ctx, c); err != nil {
			a.notef("store %s is served to this process's host only (%v); other clients wait for its lock", c.StoreDir, err)
		}
	}()
	select {
	case <-listening:
	case <-ended:
	}
	return func() {
		cancel()
		<-ended
	}
}
