package server

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ckpt/ckpt/engine"
)

// Recompressor compresses, in a resident server, the packs a first
// save stored uncompressed (engine.Options.DeferCompression), one slice of
// a pack at a time while no request runs. It starts once the server has been quiet
// for idleQuiet: a host's requests come in bursts (a save before and after
// each tool call, a diff), and a slice started between two of them would
// only slow the next one down and then be thrown away. A request that
// arrives cancels the slice in flight and waits only for it to stop (the
// engine checks between blobs); recompression resumes after the next quiet
// period. With nothing deferred, a slice costs one listing of the pack
// directory.
type Recompressor struct {
	// slice runs one slice; engine.Engine.RecompressNext unless a test
	// wraps it.
	slice func(context.Context) (*engine.RecompressResult, error)
	wake  chan struct{} // buffered 1: a request ended, or the server started
	quiet time.Duration // idleQuiet unless a test sets it

	mu struct {
		sync.Mutex
		busy   int                // requests running
		cancel context.CancelFunc // of the slice in flight, nil when none
		done   chan struct{}      // closed when the slice in flight returns
	}
}

func NewRecompressor(e *engine.Engine) *Recompressor {
	r := &Recompressor{slice: e.RecompressNext, wake: make(chan struct{}, 1), quiet: idleQuiet}
	r.wake <- struct{}{} // a store may hold deferred packs from before
	return r
}

// Begin marks a request running: it cancels the slice in flight and waits
// for it to stop. The returned function ends the request. A nil
// Recompressor does nothing.
func (r *Recompressor) Begin() (end func()) {
	if r == nil {
		return func() {}
	}
	r.mu.Lock()
	r.mu.busy++
	cancel, done := r.mu.cancel, r.mu.done
	r.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	return r.end
}

func (r *Recompressor) end() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.busy--; r.mu.busy == 0 {
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}
}

// Start runs the recompression until the returned stop is called (or ctx
// ends); stop cancels the slice in flight and waits for it.
func (r *Recompressor) Start(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { r.run(ctx) })
	return func() {
		cancel()
		wg.Wait()
	}
}

// idleQuiet is how long a server waits without requests before it
// recompresses.
const idleQuiet = 3 * time.Second

func (r *Recompressor) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		}
		if !r.quietFor(ctx) {
			continue
		}
		for r.next(ctx) {
		}
	}
}

// quietFor waits until no request has ended for r.quiet and reports
// whether it did (false when ctx ended).
func (r *Recompressor) quietFor(ctx context.Context) bool {
	t := time.NewTimer(r.quiet)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-r.wake: // another request ended: the quiet period starts again
			t.Reset(r.quiet)
		case <-t.C:
			return true
		}
	}
}

// next runs one slice unless a request is running, and reports whether
// another slice should follow at once. A failed slice is reported by the
// engine as an error event; the next wake tries again.
func (r *Recompressor) next(ctx context.Context) bool {
	r.mu.Lock()
	if r.mu.busy > 0 || ctx.Err() != nil {
		r.mu.Unlock()
		return false
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	r.mu.cancel, r.mu.done = cancel, done
	r.mu.Unlock()

	res, err := r.slice(sctx)

	r.mu.Lock()
	r.mu.cancel, r.mu.done = nil, nil
	r.mu.Unlock()
	cancel()
	close(done)
	switch {
	case errors.Is(err, context.Canceled):
		return false // a request came; its end wakes us
	case err != nil:
		return false
	}
	return res.Remaining > 0
}
