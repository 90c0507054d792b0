package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"time"

	"github.com/spf13/cobra"

	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/localsock"
)

// noBackgroundEnv, set to any non-empty value, keeps the CLI from
// recompressing in a background process: a first save then compresses as
// it writes (engine.Options.DeferCompression off), as before deferral.
const noBackgroundEnv = "CKPT_NO_BACKGROUND"

// backgroundCommand is the hidden subcommand a save starts, detached, to
// compress the packs it stored uncompressed.
const backgroundCommand = "background-recompress"

// backgroundPause separates two packs of the background process: it
// releases the store between them, and a command waiting for the lock
// (it polls every 20 ms) takes it in that gap.
const backgroundPause = 100 * time.Millisecond

// backgroundSlice bounds one wait for the store's lock in the background
// process, so that it notices a server (or the store's removal) while it
// waits; it gives up after --lock-timeout in all.
const backgroundSlice = time.Second

// deferCompression says whether a command's engine stores a first save
// uncompressed: the resident commands compress it while idle, and the
// cold CLI in a background process unless the user turned that off.
func (a *app) deferCompression(command string) bool {
	switch command {
	case "serve", "mcp":
		return true
	}
	// The background process reopens the store by -C; a multi-root
	// workspace's first save compresses as it writes instead.
	return !a.noBackground && a.roots() == nil
}

// maybeStartBackground starts the background recompression of e's store
// after a save left deferred packs, unless the command runs inside a
// server (which recompresses itself) or the user turned it off. It
// returns the process's id, 0 when none was started. Failing to start it
// fails nothing: the store stays valid, and gc compresses it.
func (a *app) maybeStartBackground(e *engine.Engine) int {
	if a.server != nil || a.idle != nil || a.noBackground {
		return 0
	}
	if _, packs, err := e.Deferred(); err != nil || packs == 0 {
		return 0
	}
	pid, err := startBackground(e.Workspace(), e.StoreDir())
	if err != nil && !a.quiet && !a.json {
		fmt.Fprintf(a.stderr, "ckpt: could not start compressing in the background (gc will): %v\n", err)
	}
	return pid
}

// startBackground starts `ckpt background-recompress` for the store,
// detached: a session of its own (a process group and no console on
// Windows), stdio on the null device, not waited for. It waits for the
// store as long as the default --lock-timeout, whatever the save's was: it
// starts while the save still holds the store.
func startBackground(workspace, store string) (int, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(exe, "-C", workspace, "--store", store, backgroundCommand)
	cmd.Dir = store
	cmd.SysProcAttr = detachedProcess()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	pid := cmd.Process.Pid
	return pid, cmd.Process.Release()
}

func (a *app) backgroundCommand() *cobra.Command {
	return &cobra.Command{
		Use:    backgroundCommand,
		Short:  "Compress the packs a first save stored uncompressed, one at a time (started by save)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.recompressInBackground(cmd.Context())
		},
	}
}

// recompressInBackground compresses the store's deferred packs one per
// open of the store, releasing it for backgroundPause between two, until
// none is left. It stops early, successfully, when the store is gone, a
// server listens for it (the server recompresses while idle), or another
// process held the store for --lock-timeout: the next save that leaves
// deferred packs starts it again.
func (a *app) recompressInBackground(ctx context.Context) error {
	for {
		e, err := a.openForBackground(ctx)
		if e == nil {
			return err
		}
		res, err := e.RecompressNext(ctx)
		if cerr := e.Close(); err == nil {
			err = cerr
		}
		if err != nil || res.Remaining == 0 {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backgroundPause):
		}
	}
}

// openForBackground opens the store for one pack, waiting for the lock in
// slices of backgroundSlice up to --lock-timeout in all. It returns a nil
// Engine (and nil error) when the process should stop without error: a
// server listens, the store stayed busy, or it is gone (it is never
// created again).
func (a *app) openForBackground(ctx context.Context) (*engine.Engine, error) {
	deadline := time.Now().Add(a.lockTimeout)
	for {
		if conn, err := localsock.Dial(a.store); err == nil {
			conn.Close()
			return nil, nil // a server holds the store and recompresses itself
		}
		wait := min(backgroundSlice, max(0, time.Until(deadline)))
		e, err := engine.Open(ctx, a.workspace, engine.Options{StoreDir: a.store, LockTimeout: wait, MustExist: true,
			Command: "ckpt " + backgroundCommand})
		switch {
		case err == nil:
			return e, nil
		case errors.Is(err, fs.ErrNotExist):
			return nil, nil
		case !errors.Is(err, engine.ErrBusy):
			return nil, err
		case !time.Now().Before(deadline):
			return nil, nil
		}
	}
}
