package engine

import (
	"os"
	"path/filepath"

	"github.com/ckpt/ckpt/internal/osfs"
)

// waitersName is the file beside the store's lock that every process
// waiting for the lock holds a shared lock on (osfs.TryLockShared), so
// that the holder can tell someone waits (Engine.Awaited).
const waitersName = "lock.waiting"

// waiterMark is a waiting process's share of the waiters file, taken
// while it waits and dropped when it stops waiting.
type waiterMark struct {
	path   string
	f      *os.File
	locked bool
}

// try takes the shared lock unless held already. It keeps trying on each
// call: a holder's probe takes the file exclusively for an instant. A file
// that cannot be opened or locked leaves the wait unmarked, as before
// waiters were marked.
func (w *waiterMark) try() {
	if w.locked {
		return
	}
	if w.f == nil {
		f, err := os.OpenFile(w.path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return
		}
		w.f = f
	}
	ok, err := osfs.TryLockShared(w.f)
	w.locked = ok && err == nil
}

// drop lets go of the mark.
func (w *waiterMark) drop() {
	if w.f != nil {
		w.f.Close()
		w.f, w.locked = nil, false
	}
}

// Awaited reports whether another process waits for this store's lock
// now: an Open of the same store (any command) that found it held. A
// process that works in slices (a background recompression) asks between
// them, or while one runs, to give the store up promptly. It is one open
// and one non-blocking lock of a small file; false when that file cannot
// be read.
func (e *Engine) Awaited() bool {
	f, err := os.OpenFile(filepath.Join(e.storeDir, waitersName), os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	free, err := osfs.TryLock(f)
	return err == nil && !free
}
