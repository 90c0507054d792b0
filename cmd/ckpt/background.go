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
	"github.com/ckpt/ckpt/internal/background"
	"github.com/ckpt/ckpt/internal/localsock"
)

// noBackgroundEnv, set to any non-empty value, keeps the CLI from
// recompressing in a background process: a first save then compresses as
// it writes (engine.Options.DeferCompression off), as before deferral.
const noBackgroundEnv = "CKPT_NO_BACKGROUND"

// backgroundCommand is the hidden subcommand a save starts, detached, to
// compress the packs it stored uncompressed.
const backgroundCommand = "background-recompress"

// backgroundQuiet is how long the store must have been left alone (no
// process took or let go of its lock) before the background process takes
// it for a pack: commands come in bursts, and one that found the store
// taken would wait for the background to open it and give it up.
const backgroundQuiet = time.Second

// backgroundProbe is how often the background process asks, while it
// compresses a pack, whether a command waits for the store
// (engine.Engine.Awaited); it then drops the pack's work so far and
// releases the store.
const backgroundProbe = 10 * time.Millisecond

// errYield ends a pack's slice for a command that waits for the store.
var errYield = errors.New("a command waits for the store")

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
	if pid, err := background.Running(e.StoreDir()); err != nil || pid != 0 {
		return 0 // one runs already and takes the new packs too
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

// recompressInBackground compresses the store's deferred packs a slice at
// a time until none is left. It first lowers its own CPU and I/O priority
// below every command's (background.LowerPriority) and marks the store as
// its own (background.Claim): `ckpt stats` names it, and a second one for
// the same store exits at once. It opens the store once it has been quiet
// for backgroundQuiet and keeps it while no command waits for it; a
// command that comes to wait gets it within backgroundProbe and the
// cleanup of the slice it cuts off (done again later), even with
// --lock-timeout 0 (engine.Options.GivesWay), and the process opens the
// store again after the next quiet moment. One engine.RecompressRun goes
// through every open, so the heads' files are indexed for delta bases
// once a run unless a command cuts the indexing itself off. It
// stops early, successfully, when the store is gone, a server listens for
// it (the server recompresses while idle), or it completed no slice for
// --lock-timeout (no quiet moment, or a waiter that never takes the
// store): the next save that leaves deferred packs starts it again.
func (a *app) recompressInBackground(ctx context.Context) error {
	// What could not be lowered runs at normal priority: no reason to
	// leave the packs raw.
	_ = background.LowerPriority()
	if a.store == "" { // run by hand without --store
		var err error
		if a.store, err = a.defaultStore(); err != nil {
			return err
		}
	}
	release, ok, err := background.Claim(a.store)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !ok) {
		return nil // the store is gone, or another process compresses it
	}
	if err != nil {
		return err
	}
	defer release()
	run := new(engine.RecompressRun)
	deadline := time.Now().Add(a.lockTimeout) // --lock-timeout after the last completed slice
	for {
		e, err := a.openForBackground(ctx, run, deadline)
		if e == nil {
			return err
		}
		finished, slices, err := recompressUntilAwaited(ctx, e)
		if cerr := e.Close(); err == nil {
			err = cerr
		}
		switch {
		case err != nil || finished:
			return err
		case slices > 0:
			deadline = time.Now().Add(a.lockTimeout)
		case !time.Now().Before(deadline):
			return nil // gave way at once, and has for --lock-timeout
		}
	}
}

// recompressUntilAwaited runs slices of e's recompression until no
// deferred pack is left (finished) or a command waits for the store. It
// reports how many slices it completed.
func recompressUntilAwaited(ctx context.Context, e *engine.Engine) (finished bool, slices int, err error) {
	for {
		res, yielded, err := recompressYielding(ctx, e)
		if err != nil || yielded {
			return false, slices, err
		}
		slices++
		if res.Remaining == 0 {
			return true, slices, nil
		}
	}
}

// recompressYielding compresses the next slice of e's deferred packs,
// unless a command waits for the store or comes to wait meanwhile: then it
// does not start (a nil result), or stops within backgroundProbe with the
// pack as it was, to be done again; either way it reports yielded, with
// no error.
func recompressYielding(ctx context.Context, e *engine.Engine) (res *engine.RecompressResult, yielded bool, err error) {
	if e.Awaited() {
		return nil, true, nil
	}
	slice, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(backgroundProbe)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if e.Awaited() {
					cancel(errYield)
					return
				}
			}
		}
	}()
	res, err = e.RecompressNext(slice)
	close(done)
	// A slice that ended before the probe's cancel took effect is done,
	// not given up: the next call gives way before it starts one.
	if ctx.Err() == nil && errors.Is(context.Cause(slice), errYield) && errors.Is(err, context.Canceled) {
		return res, true, nil
	}
	return res, false, err
}

// openForBackground opens the store, with run, once it has been quiet
// for backgroundQuiet: no process took or let go of its lock meanwhile
// (engine.LastLockChange), so that it stays out of a burst of commands
// instead of taking the store in the gaps between them. It returns a nil
// Engine (and nil error) when the process should stop without error: a
// server listens, deadline came first (no slice was completed for
// --lock-timeout: the store found no lull, or a waiter that never takes
// it, such as a stopped process, made every open give way at once), or
// the store is gone (it is never created again).
func (a *app) openForBackground(ctx context.Context, run *engine.RecompressRun, deadline time.Time) (*engine.Engine, error) {
	for {
		if conn, err := localsock.Dial(a.store); err == nil {
			conn.Close()
			return nil, nil // a server holds the store and recompresses itself
		}
		changed, err := engine.LastLockChange(a.store)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		wait := backgroundQuiet - time.Since(changed)
		if wait <= 0 {
			// LockTimeout 0: a holder means the store is in use.
			e, err := engine.Open(ctx, a.workspace, engine.Options{StoreDir: a.store, MustExist: true,
				RecompressRun: run, GivesWay: true, Command: "ckpt " + backgroundCommand})
			switch {
			case err == nil:
				return e, nil
			case errors.Is(err, fs.ErrNotExist):
				return nil, nil
			case !errors.Is(err, engine.ErrBusy):
				return nil, err
			}
			wait = backgroundQuiet
		}
		if !time.Now().Add(wait).Before(deadline) {
			return nil, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
}
