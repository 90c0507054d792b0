package save

import (
	"io"
	"os"
	"path/filepath"
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
	// blind: a directory told to MadeDir was not watched, or held an
	// entry when it was.
	blind bool
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

// MadeDir watches dir (workspace-relative), a directory the operation
// has just made, or found standing where it makes one, before it puts
// anything in it, and lists it: an entry already there is someone else's,
// made before the watch could report it, and the audit then vouches for
// nothing. Once it cannot vouch (that, or its record is incomplete), it
// watches no more. It is called from one goroutine at a time, before End.
func (a *Audit) MadeDir(dir string) {
	if a.blind || !a.w.Watch(dir) {
		a.blind = true
		return
	}
	f, err := os.Open(filepath.Join(a.t.workspace, filepath.FromSlash(dir)))
	if err == nil {
		_, err = f.Readdirnames(1)
		f.Close()
	}
	if err != io.EOF {
		a.blind = true
	}
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
	// Of the reasons for a wider report, a rule file changed may capture
	// what the root does not; an unwatched directory (one that could not
	// be watched, or whose watch the kernel dropped, or a mount point) may
	// change with no event. Only a directory made (a Rescan for new-dir)
	// may be the operation's own: own finds its making among its events,
	// and the operation told MadeDir of it, so it was empty once watched
	// and raised an event for every change since. (The linked directories
	// cannot have changed since StartAudit: only a committed scan sets
	// them, and the operation holds the engine's write lock.)
	if own == nil || !a.clean || a.blind || !complete || t.all != 0 || c.Reasons&^watch.ReasonNewDir != 0 {
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
	snap := &Snapshot{Root: root, Pending: newPending()}
	snap.partial.Store(true)
	snap.Skipped = slices.Clone(st.Tracker.lastSkipped())
	return snap
}
