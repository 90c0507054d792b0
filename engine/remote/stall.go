package remote

import (
	"context"
	"fmt"
	"io"
	"math"
	"sync/atomic"
	"time"
)

// defaultReadStall is Config.ReadStall's default: the client's own wait
// for a response's headers.
const defaultReadStall = time.Minute

// stallGuard ends a response whose body sends nothing for d while a Read
// waits on it. The HTTP client bounds the wait for a response's headers,
// not for its body: a service (or a network path) that stops sending
// half way would hold a read, and the operation above it, for ever. The
// clock runs only inside Read, so a caller that takes its time between
// reads (a diff shown page by page) is never cut off.
type stallGuard struct {
	ctx    context.Context // the caller's
	d      time.Duration
	timer  *time.Timer
	fired  atomic.Bool
	cancel context.CancelFunc
}

// newStallGuard returns the context to make the request with, and its
// guard; the caller stops the guard (Close of guarded, or stop) when done.
func newStallGuard(ctx context.Context, d time.Duration) (context.Context, *stallGuard) {
	g := &stallGuard{ctx: ctx, d: d}
	ctx, g.cancel = context.WithCancel(ctx)
	g.timer = time.AfterFunc(math.MaxInt64, func() { // armed by each Read
		g.fired.Store(true)
		g.cancel() // the transport ends the blocked read
	})
	return ctx, g
}

// stop releases the request's context.
func (g *stallGuard) stop() {
	g.timer.Stop()
	g.cancel()
}

// guarded is body read under g, and closed with it.
func (g *stallGuard) guarded(r io.Reader, body io.Closer) io.ReadCloser {
	return &stallReader{g: g, r: r, body: body}
}

// stallReader is a body read under its stallGuard's clock.
type stallReader struct {
	g    *stallGuard
	r    io.Reader
	body io.Closer
}

// Read fails with an error wrapping ErrStalled once a Read waited d for
// bytes. The timer sets fired before it cancels, so a read the
// cancellation ended sees it (a callback of an earlier arming may come
// late, after Reset: its cancellation is reported as the stall it was).
func (s *stallReader) Read(p []byte) (int, error) {
	if s.g.fired.Load() {
		return 0, s.g.err()
	}
	s.g.timer.Reset(s.g.d)
	n, err := s.r.Read(p)
	s.g.timer.Stop()
	if err != nil && err != io.EOF && s.g.fired.Load() {
		return n, s.g.err()
	}
	return n, err
}

func (s *stallReader) Close() error {
	s.g.stop()
	return s.body.Close()
}

// err is the error of a read after the timer fired: the caller's own
// context's, should it have ended meanwhile, else the stall.
func (g *stallGuard) err() error {
	if err := g.ctx.Err(); err != nil {
		return err
	}
	return fmt.Errorf("%w for %v", ErrStalled, g.d)
}
