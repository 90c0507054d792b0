package engine

import (
	"time"

	"github.com/ckpt/ckpt/engine/internal/restore"
)

// RestorePhases is where a restore's time went, phase by phase in the
// order it spends them; RestoreResult.Duration also holds the wait for the
// store's lock and the settling of another restore. A dry run fills Backup
// and Plan only.
type RestorePhases struct {
	Backup  time.Duration // the backup checkpoint of the current state (or, without one, the scan of it)
	Plan    time.Duration // the plan, and finding (or fetching) the blobs it writes
	Journal time.Duration // what remains, once the plan is made, of writing the journal durably, which began with the plan (and, watched, the audit of the restore's events beginning)
	Write   time.Duration // removals, directories and file contents (small restores: each file made durable)
	Place   time.Duration // the staged files' syncfs and renames (larger restores), directory modes
	Flush   time.Duration // the workspace's last flush, the task's head moving beside it
	Finish  time.Duration // the audit's end (watched) and clearing the journal (for a Restore, synced after it answers)
}

// applied takes the applier's phases.
func (p *RestorePhases) applied(t restore.Timing) {
	p.Write, p.Place, p.Flush = t.Write, t.Place, t.Flush
}
