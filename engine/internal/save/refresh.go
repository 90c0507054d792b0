package save

import (
	"context"
	"fmt"
	"time"

	"github.com/ckpt/ckpt/objects"
)

// RefreshDelay is how long after the last write to a file a scan must
// start for the stat-cache record it takes of that file to be trusted (the
// racy margin), and a little more: a refresh started that long after a
// restore vouches for every file the restore wrote, but where the file
// system keeps whole seconds (see racy), whose records stay racy for a
// second or two.
const RefreshDelay = time.Duration(racyMargin) + 5*time.Millisecond

// Refresh scans the workspace as a save would (with the Tracker's plan,
// when there is one, but walking even where it vouches for the root) but
// stores nothing, and commits the stat-cache records it took only when it
// finds the workspace holding exactly the tree root, which must be a
// committed checkpoint's: every blob and tree those records name is then
// stored. The commit is unsynced (losing it costs only the reading again)
// and settles the changes the scan covered, so the next save trusts those
// records instead of reading the files again: after a restore, whose
// written files have no record it could trust, that save is the redo's
// backup. Finding anything else, it commits nothing, leaves every change
// pending and ends the Tracker's vouching, if any (see Audit). It reports
// whether it committed; a cancelled ctx stops it with ctx's error.
func (st *Store) Refresh(ctx context.Context, root objects.ID) (bool, error) {
	snap, err := st.walk(ctx, nil, root, nil, nil) // a vouched root has no records to give
	if err == nil {
		err = ctx.Err() // a scan that found nothing to walk need not have looked
	}
	if err != nil {
		return false, err
	}
	if snap.Root != root {
		if st.Tracker != nil {
			st.Tracker.doubt() // whatever it vouched for, the walk found otherwise
		}
		return false, nil
	}
	b := st.DB.NewBatch()
	defer b.Close()
	putStatCache(b, &snap.Pending)
	if err := b.CommitUnsynced(); err != nil {
		return false, fmt.Errorf("commit index: %w", err)
	}
	if st.Tracker != nil {
		st.Tracker.Settle(snap)
	}
	return true, nil
}
