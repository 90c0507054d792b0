package save

import (
	"slices"

	"github.com/ckpt/ckpt/internal/watch"
	"github.com/ckpt/ckpt/objects"
)

// Audit follows an operation that writes the workspace (a restore) event by
// event, so that its end can vouch for the root the operation wrote: the
// next scan then needs to read nothing the operation wrote, as long as the
// watcher reports nothing more.
type Audit struct {
	t *Tracker
	w *watch.Audit
	// clean: when the audit began the workspace held from, as far as the
	// Tracker knew: every change the watcher had reported was covered by a
	// committed scan, or the Tracker vouched for from; and no directory
	// held a file with several links (which may change with no event).
	clean bool
}

// StartAudit begins following the workspace's events, for an operation
// that found the workspace holding root from; nil when the watcher cannot
// record them. End must follow.
func (t *Tracker) StartAudit(from objects.ID) *Audit {
	t.mu.Lock()
	defer t.mu.Unlock()
	w, c := t.w.StartAudit()
	t.absorbChangesLocked(c)
	if w == nil {
		return nil
	}
	known := t.settledLocked() || t.vouched != nil && *t.vouched == from
	return &Audit{t: t, w: w, clean: known && len(t.linked) == 0}
}

// settledLocked reports whether nothing the watcher reported is pending.
func (t *Tracker) settledLocked() bool {
	return t.all == 0 && len(t.dirty) == 0 && len(t.rescan) == 0 && len(t.entries) == 0
}

// End stops following the events and takes the changes they made, as any
// scan would find them pending. Then, when own (nil: never) finds every
// event recorded since StartAudit to be the operation's own and the audit
// began clean, the Tracker vouches that the workspace holds root until the
// watcher reports anything at all (see Vouched). The operation's writes
// stay pending: a scan that does not take the vouch reads them.
func (a *Audit) End(own func([]watch.Event) bool, root objects.ID) {
	t := a.t
	t.mu.Lock()
	defer t.mu.Unlock()
	events, complete, c := a.w.End()
	t.absorbChangesLocked(c)
	// A rule file changed (Rescan) may capture what the root does not; an
	// unwatched directory may change with no event. (The linked directories
	// cannot have changed since StartAudit: only a committed scan sets
	// them, and the operation holds the engine's write lock.)
	if own == nil || !a.clean || !complete || t.all != 0 || len(c.Rescan) > 0 || c.Reasons&watch.ReasonUnwatched != 0 {
		return
	}
	if own(events) {
		t.vouched = &root
	}
}

// Vouched returns the root an audit vouched for (see Audit.End), after
// taking the watcher's changes: any change reported since the audit ended
// ends the vouching. With no vouching it asks the watcher nothing (the
// scan that follows does), so a save where no restore vouched, and every
// save on a backend that records no events, costs what it did.
func (t *Tracker) Vouched() (objects.ID, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.vouched == nil {
		return objects.ID{}, false
	}
	t.absorbLocked()
	if t.vouched == nil {
		return objects.ID{}, false
	}
	return *t.vouched, true
}

// doubt ends a vouching: a walk found the workspace holding another root.
func (t *Tracker) doubt() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.vouched = nil
}

// vouchedSnapshot is the snapshot of a workspace the Tracker vouches holds
// root: nothing was listed or read, so it is partial, and it reports
// skipped what the last committed scan did, as a scan pruning everything
// would. It settles nothing (its plan is nil).
func (st *Store) vouchedSnapshot(root objects.ID) *Snapshot {
	snap := &Snapshot{Root: root, Pending: newPending(), vouched: true}
	snap.partial.Store(true)
	snap.Skipped = slices.Clone(st.Tracker.lastSkipped())
	return snap
}
