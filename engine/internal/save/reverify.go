package save

import (
	"context"

	"github.com/ckpt/ckpt/objects"
	"github.com/ckpt/ckpt/walker"
)

// Reverify walks the whole workspace as a scan without a watcher would,
// on at most workers goroutines, storing nothing, and compares every
// directory with its stat cache. It returns the directories whose content
// differs although the Tracker had no change pending for them (changes the
// watcher missed) and makes them dirty, so the next scan reads them
// whatever the watcher says. Without a Tracker it returns nothing.
func (st *Store) Reverify(ctx context.Context, workers int) ([]string, error) {
	if st.Tracker == nil {
		return nil, nil
	}
	// Modes carried from a base checkpoint play no part: directories are
	// compared by their entries' names, kinds, permissions and contents.
	s := st.newScanner(nil, objects.ID{}, nil)
	set, err := st.DB.LoadDirCaches()
	if err != nil {
		return nil, err
	}
	s.cached = set
	s.differ = &[]string{}
	opts := st.Walk
	opts.Workers = workers
	if _, _, err := walker.Walk(ctx, st.Workspace, opts, s.visit); err != nil {
		return nil, err
	}
	return st.Tracker.missed(*s.differ), nil
}
