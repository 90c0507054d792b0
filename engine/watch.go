package engine

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/ckpt/ckpt/engine/internal/restore"
	"github.com/ckpt/ckpt/engine/internal/save"
	"github.com/ckpt/ckpt/internal/watch"
	"github.com/ckpt/ckpt/objects"
)

// defaultWatchMaxPending is how many changed directories the watcher
// tracks between two saves before it gives up on them and the next save
// walks everything: by then a walk costs about what re-reading them
// would, and the watcher's memory stays bounded.
const defaultWatchMaxPending = 1 << 16

// startWatch starts the change watcher of Options.Watch, the reading
// ahead of the versions the next save stores the written files' content
// as deltas against (save.Prefetcher), the presaver of what was written
// (presave.go), the periodic re-verification and the refresher of the
// stat cache after restores. All outlive Open's
// context: they run until Close.
func (e *Engine) startWatch() error {
	rules := []string{filepath.Join(e.workspace, ".git", "info", "exclude")}
	pending := defaultWatchMaxPending
	if e.opts.hooks.watchMaxPending > 0 {
		pending = e.opts.hooks.watchMaxPending
	}
	ahead := save.NewPrefetcher(e.db, e.blobs, e.workspace, e.opts.hooks.prefetched)
	delay := presaveDelay
	if e.opts.hooks.presaveDelay > 0 {
		delay = e.opts.hooks.presaveDelay
	}
	presave := startRefresher(delay, e.presaveNow)
	w, err := watch.Start(context.Background(), e.workspace, watch.Options{RuleFiles: rules, MaxPending: pending,
		MaxWatches: e.opts.hooks.watchMaxWatches, Written: func(rel string) {
			ahead.Heard(rel)
			if !ahead.Muted() { // a restore's own writes are no edits
				presave.schedule("")
			}
		}})
	if err != nil {
		presave.close()
		return fmt.Errorf("watch workspace: %w", err)
	}
	e.presave = presave
	e.save.Tracker = save.NewTracker(w, e.workspace, rules)
	ahead.Start()
	e.prefetch = ahead
	e.startReverify()
	if w.Stats().Backend != watch.BackendNone { // else every save walks everything anyway
		e.startRefresh()
	}
	return nil
}

// holdReadAhead stops the encoding ahead while a save runs (see
// save.Prefetcher.Hold).
func (e *Engine) holdReadAhead() (release func()) {
	if e.prefetch == nil {
		return func() {}
	}
	return e.prefetch.Hold()
}

// muteReadAhead stops the reading ahead from hearing the files a restore
// writes, which are no edits. The returned function, called once the
// writes are done, lets the watcher's events of them arrive first.
func (e *Engine) muteReadAhead() (unmute func()) {
	if e.prefetch == nil {
		return func() {}
	}
	hear := e.prefetch.Mute()
	return func() {
		e.save.Tracker.Absorb()
		hear()
	}
}

// auditRestore follows a restore's writes event by event (save.Audit) when
// it may vouch for the target's root: a whole-workspace restore of a
// single-root workspace from a backup taken now (root is then not zero;
// from is the backup's root, the plan's source), in an engine whose
// watcher records events. The returned function, called with Apply's
// error, vouches that the workspace holds root when Apply left no conflict
// and every event meanwhile was its own (restore.Plan.Explains): the next
// save then walks nothing until the watcher reports a change.
func (e *Engine) auditRestore(x *restore.Applier, plan *restore.Plan, from, root objects.ID) (audited func(error)) {
	if root.IsZero() || e.save.Tracker == nil || e.places.roots != nil {
		return func(error) {}
	}
	a := e.save.Tracker.StartAudit(from)
	if a == nil {
		return func(error) {}
	}
	return func(err error) {
		var own func([]watch.Event) bool
		if err == nil && len(x.Result.Conflicts) == 0 {
			own = plan.Explains
		}
		a.End(own, root)
	}
}

// WatchStats describes the change watcher of an Engine opened with
// Options.Watch.
type WatchStats struct {
	// Backend is "inotify", "ReadDirectoryChangesW", "FSEvents", or "none"
	// where the platform or the file system offers no watcher (or the
	// environment variable CKPT_WATCHER is "none"): every save then walks
	// the whole workspace, and Fallback says why.
	Backend  string
	Fallback string
	// Provisional is set for a watcher not yet proven on its platform by
	// this project's tests; it makes a save walk everything now and then
	// on its own, so a missed change lasts at most that long.
	Provisional bool
	Watches     int // kernel watches held for captured directories
	Unwatched   int // captured directories that could not be watched (walked at every save)
	Overflows   int // event queue overflows (each one walks the whole workspace)
	// Reverified counts the re-verifications run (see Reverify), Missed
	// the changes they found that the watcher had not reported.
	Reverified, Missed int
}

// WatchStats returns the watcher's counters; false when the Engine has no watcher.
func (e *Engine) WatchStats() (WatchStats, bool) {
	if e.save == nil || e.save.Tracker == nil {
		return WatchStats{}, false
	}
	s := e.save.Tracker.Stats()
	runs, missed := e.reverify.counts()
	return WatchStats{Backend: s.Backend, Fallback: s.Fallback, Provisional: s.Provisional,
		Watches: s.Watches, Unwatched: s.Unwatched, Overflows: s.Overflows, Reverified: runs, Missed: missed}, true
}
