package engine

import (
	"context"
	"sync"
	"time"

	"github.com/ckpt/ckpt/engine/internal/save"
)

// refresher refreshes the stat cache after a whole-workspace restore of a
// watched Engine. The files a restore writes have no stat-cache record a
// save can trust, so the next save (a redo's backup, say) would read them
// all again; once they are past the racy window (save.RefreshDelay) the
// refresher scans what the watcher reported, storing nothing, and commits
// the records when the workspace still holds the task's head
// (save.Store.Refresh). It runs on its own goroutine, under the write
// lock, and gives way to any write that arrives: that write then reads
// what it needs itself, as it did before. The presaver (presave.go) is
// another refresher, whose work differs.
type refresher struct {
	kick  chan struct{}
	stop  context.CancelFunc
	done  chan struct{}
	delay time.Duration // from the latest schedule to the work

	mu struct {
		sync.Mutex
		task string
		due  time.Time
	}
}

// startRefresh starts the refresher of a watched Engine; Close stops it.
func (e *Engine) startRefresh() { e.refresh = startRefresher(save.RefreshDelay, e.refreshNow) }

// startRefresher starts the goroutine that calls now once delay has passed
// since the latest schedule, until now reports it did its work (false: a
// later schedule came meanwhile); close stops it.
func startRefresher(delay time.Duration, now func(context.Context) bool) *refresher {
	ctx, cancel := context.WithCancel(context.Background())
	r := &refresher{kick: make(chan struct{}, 1), stop: cancel, done: make(chan struct{}), delay: delay}
	go func() {
		defer close(r.done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-r.kick:
			}
			for done := false; !done; {
				if !r.awaitDue(ctx) {
					return
				}
				done = now(ctx)
			}
		}
	}()
	return r
}

// schedule asks for the work on task's files once delay has passed (for
// the refresh, once the restore that just wrote them is save.RefreshDelay
// behind); a later call moves it later.
func (r *refresher) schedule(task string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.mu.task, r.mu.due = task, time.Now().Add(r.delay)
	r.mu.Unlock()
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// awaitDue waits until the latest schedule's moment has passed; false when
// ctx ended first.
func (r *refresher) awaitDue(ctx context.Context) bool {
	for {
		r.mu.Lock()
		wait := time.Until(r.mu.due)
		r.mu.Unlock()
		if wait <= 0 {
			return true
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
	}
}

// due returns the task of the latest schedule and whether its moment has
// passed.
func (r *refresher) due() (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mu.task, !time.Now().Before(r.mu.due)
}

// refreshNow takes the write lock and refreshes the stat cache against the
// head of the latest schedule's task, unless a restore is pending (its
// journal is settled by the next write). It returns false, doing nothing,
// when a restore that held the lock meanwhile scheduled a later refresh.
// Errors other than giving way are reported as background errors.
func (e *Engine) refreshNow(ctx context.Context) bool {
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	task, due := e.refresh.due()
	if !due {
		return false
	}
	if e.pending != nil {
		return true
	}
	root, err := e.headRoot(task)
	var committed, gaveWay bool
	if err == nil {
		e.background.during(ctx, func(run context.Context) {
			if hook := e.opts.hooks.beforeRefresh; hook != nil {
				hook(run)
			}
			committed, err = e.save.Refresh(run, root)
			gaveWay = err != nil && run.Err() != nil
		})
	}
	if err != nil && !gaveWay && ctx.Err() == nil {
		e.backgroundError(err)
	}
	if hook := e.opts.hooks.refreshed; hook != nil {
		hook(committed)
	}
	return true
}

// close stops the refresher and waits for it.
func (r *refresher) close() {
	if r == nil {
		return
	}
	r.stop()
	<-r.done
}
