package engine

import (
	"context"
	"sync"
	"time"
)

// reverifyInterval is how often a watched Engine re-verifies the
// workspace on its own (see Reverify): a change no notification reports
// (a blind spot of the kernel's watcher) is saved at most this late.
const reverifyInterval = 5 * time.Minute

// reverifyRetry is how soon a periodic re-verification that gave way to a
// write runs again, this time without giving way.
const reverifyRetry = time.Second

// reverifyWorkers bounds the goroutines of a re-verification: it keeps to
// one core, leaving the others to the host.
const reverifyWorkers = 1

// ReverifyResult reports one re-verification.
type ReverifyResult struct {
	// Missed are the directories (workspace-relative, "" for the root)
	// whose change the watcher did not report; the next save reads them.
	Missed   []string
	Duration time.Duration
}

// reverifier runs the periodic re-verification of a watched Engine and
// counts what all of them found.
type reverifier struct {
	stop context.CancelFunc
	done chan struct{}

	mu struct {
		sync.Mutex
		runs   int
		missed int
	}
}

// Reverify checks that what the change watcher let saves trust is true: it
// stats every captured file (reading only files whose stat differs from
// the stat cache) and compares each directory with its stat cache. Every
// directory found changed with no change reported for it is a missed
// event: counted in WatchStats.Missed, reported in an EventMissedChanges,
// and made dirty, so the next save captures it. A watched Engine runs it
// on its own every five minutes, between operations: a periodic run gives
// way to a write that arrives and runs again a second later without giving
// way, so a missed change is saved at most an interval late, never lost
// for good. It is serialised with writes; without a watcher it does
// nothing.
func (e *Engine) Reverify(ctx context.Context) (*ReverifyResult, error) {
	unlock, err := e.lockForWrite()
	if err != nil {
		return nil, translate(err, e.storeDir)
	}
	defer unlock()
	res, err := e.reverifyLocked(ctx)
	return res, translate(err, e.storeDir)
}

func (e *Engine) reverifyLocked(ctx context.Context) (*ReverifyResult, error) {
	start := time.Now()
	if e.reverify == nil {
		return &ReverifyResult{}, nil
	}
	missed, err := e.save.Reverify(ctx, reverifyWorkers)
	if err != nil {
		return nil, err
	}
	res := &ReverifyResult{Missed: missed, Duration: time.Since(start)}
	r := e.reverify
	r.mu.Lock()
	r.mu.runs++
	r.mu.missed += len(missed)
	r.mu.Unlock()
	if len(missed) > 0 {
		e.emit(Event{Type: EventMissedChanges, Paths: missed, Duration: res.Duration})
	}
	return res, nil
}

// startReverify starts the periodic re-verification; Close stops it.
func (e *Engine) startReverify() {
	ctx, cancel := context.WithCancel(context.Background())
	r := &reverifier{stop: cancel, done: make(chan struct{})}
	e.reverify = r
	every := reverifyInterval
	if e.opts.hooks.reverifyInterval > 0 {
		every = e.opts.hooks.reverifyInterval
	}
	go func() {
		defer close(r.done)
		t := time.NewTimer(every)
		defer t.Stop()
		gaveWay := false
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			gaveWay = e.reverifyPeriodic(ctx, !gaveWay)
			if gaveWay {
				t.Reset(reverifyRetry)
			} else {
				t.Reset(every)
			}
		}
	}()
}

// reverifyPeriodic runs one periodic re-verification, which a write that
// arrives meanwhile stops when mayGiveWay; it reports whether it gave way.
func (e *Engine) reverifyPeriodic(ctx context.Context, mayGiveWay bool) (gaveWay bool) {
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	var err error
	if mayGiveWay {
		e.background.during(ctx, func(run context.Context) {
			_, err = e.reverifyLocked(run)
			gaveWay = err != nil && ctx.Err() == nil && run.Err() != nil
		})
	} else {
		_, err = e.reverifyLocked(ctx)
	}
	if err != nil && ctx.Err() == nil && !gaveWay {
		e.backgroundError(err)
	}
	return gaveWay
}

// close stops the periodic re-verification and waits for it.
func (r *reverifier) close() {
	if r == nil {
		return
	}
	r.stop()
	<-r.done
}

// counts returns the runs so far and the missed changes they found.
func (r *reverifier) counts() (runs, missed int) {
	if r == nil {
		return 0, 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mu.runs, r.mu.missed
}
