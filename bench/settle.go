//go:build linux

package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
)

// sysServerSettled is the resident server measured the way a host meets
// it once the workspace has been open a minute: after its first save it
// is left alone until its idle recompression has compressed every pack
// that save deferred, and only then are the operations after the first
// save measured. Its store is its own.
const sysServerSettled = "ckpt-server-settled"

// newSettledServer returns the settled server system, its store in work.
func newSettledServer(bin, ws, work string, env []string) *ckptServer {
	return &ckptServer{sys: sysServerSettled, bin: bin, ws: ws, store: filepath.Join(work, "store-server-settled"), env: env, settle: true}
}

// settlePoll is how long settled leaves the server alone between two
// questions: longer than the server's quiet period before it starts
// compressing (3 s), so that each question leaves it a few seconds of
// work. A question cancels the slice in flight, which is redone.
const settlePoll = 8 * time.Second

// settleLimit bounds the wait for the idle recompression.
const settleLimit = 10 * time.Minute

// settled waits until the server has compressed every pack its first save
// deferred, and returns how long that took. The operations after it then
// meet compressed groups to decode, and index and page caches that the
// recompression's reads and writes went through.
func (c *ckptServer) settled(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	for {
		n, err := c.deferredPacks(ctx)
		switch {
		case err != nil:
			return 0, fmt.Errorf("settle: %w", err)
		case n == 0:
			return time.Since(start), nil
		case time.Since(start) > settleLimit:
			return 0, fmt.Errorf("settle: %d packs still raw after %s", n, settleLimit)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(settlePoll):
		}
	}
}

func (c *ckptServer) deferredPacks(ctx context.Context) (int, error) {
	var st protocol.StoreStatsJSON
	_, err := c.call(ctx, &st, "stats")
	return st.DeferredPacks, err
}
