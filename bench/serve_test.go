//go:build linux

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/cmd/ckpt/server"
	"github.com/ckpt/ckpt/engine"
)

// serveAsCkptEnv, set to 1, makes the test binary answer JSON-RPC on
// stdio as `ckpt serve` does, from the packages ckpt serve is made of
// (its method table and the server's idle recompression): the short
// tests measure the bench's embedded-host system without building the
// ckpt binary, a link that was most of this package's test time.
const serveAsCkptEnv = "CKPT_BENCH_TEST_SERVE"

// serveAsCkpt runs `ckpt --store S -C W --profile P serve` (the command
// line ckptRPC starts) in this process: it opens the store with the
// options ckpt serve opens it with, a change watcher and deferred
// compression, and answers on stdin and stdout until stdin ends.
func serveAsCkpt(args []string) error {
	fs := flag.NewFlagSet("ckpt", flag.ContinueOnError)
	store := fs.String("store", "", "store directory")
	ws := fs.String("C", "", "workspace")
	profile := fs.String("profile", "default", "exclusion profile")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 || fs.Arg(0) != "serve" {
		return fmt.Errorf("want the command serve, got %q", fs.Args())
	}
	ctx := context.Background()
	events, scans := &protocol.StoreEvents{}, &protocol.ScanHub{}
	e, err := engine.Open(ctx, *ws, engine.Options{
		StoreDir: *store, Profile: *profile, Command: "ckpt serve",
		Watch: true, DeferCompression: true,
		OnEvent: events.Send, OnProgress: scans.Send, OpenRemote: protocol.OpenRemote,
	})
	if err != nil {
		return err
	}
	idle := server.NewRecompressor(e)
	stop := idle.Start(ctx)
	err = protocol.ServeJSONRPC(ctx, e, protocol.Session{Scans: scans, Busy: idle.Begin, Store: events}, os.Stdin, os.Stdout)
	stop()
	return errors.Join(err, e.Close())
}
