package engine

import (
	"context"
	"sync"
	"sync/atomic"
)

// yielder lets the background work of a watched Engine that holds the
// write lock (a periodic re-verification, a refresh after a restore) give
// way to a write: lockForWrite cancels the work's context, and the work
// stops and releases the lock as soon as it notices. A write that was
// already waiting when the work took the lock stops it at once too. Both
// kinds of work hold writeMu, so one yielder serves them all.
type yielder struct {
	waiting atomic.Int32 // writes between giveWay and taking the lock
	mu      sync.Mutex
	yield   context.CancelFunc // stops the work in progress; nil when none may be stopped
}

// during runs work with a context derived from ctx that a write waiting for
// the lock cancels. The caller holds writeMu.
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
	if y.waiting.Load() > 0 { // a write asked before the work had the lock
		cancel()
	}
	work(run)
}

// giveWay stops the background work in progress, if it may be stopped, and
// any that takes the lock before the write does; the write calls the
// returned function once it holds the lock.
func (y *yielder) giveWay() (holding func()) {
	y.waiting.Add(1)
	y.mu.Lock()
	if y.yield != nil {
		y.yield()
	}
	y.mu.Unlock()
	return func() { y.waiting.Add(-1) }
}
