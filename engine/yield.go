package engine

import (
	"context"
	"sync"
)

// yielder lets the background work of a watched Engine that holds the
// write lock (a periodic re-verification, a refresh after a restore) give
// way to a write: lockForWrite cancels the work's context, and the work
// stops and releases the lock as soon as it notices. Both hold writeMu, so
// one yielder serves them all.
type yielder struct {
	mu    sync.Mutex
	yield context.CancelFunc // stops the work in progress; nil when none may be stopped
}

// during runs work with a context derived from ctx that giveWay cancels
// while work runs. The caller holds writeMu.
func (y *yielder) during(ctx context.Context, work func(context.Context)) {
	run, cancel := context.WithCancel(ctx)
	defer cancel()
	y.mu.Lock()
	y.yield = cancel
	y.mu.Unlock()
	defer func() {
		y.mu.Lock()
		y.yield = nil
		y.mu.Unlock()
	}()
	work(run)
}

// giveWay stops the background work in progress, if it may be stopped, so
// that a write waiting for the lock gets it at once.
func (y *yielder) giveWay() {
	y.mu.Lock()
	if y.yield != nil {
		y.yield()
	}
	y.mu.Unlock()
}
