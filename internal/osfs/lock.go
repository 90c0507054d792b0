package osfs

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// TryLock takes an exclusive lock on f without waiting. It reports false,
// with a nil error, when another holder has the lock: another process, or
// another open file of the same process (so an Engine that was never closed
// still counts as a holder). The lock is released when f is closed or its
// process dies, so a crashed holder never leaves it behind. The file's
// contents stay readable by everyone (a holder may describe itself there).
// Unix: flock(2); Windows: LockFileEx on one byte at 1 GiB, far past any
// content (a locked range cannot be read through another handle).
func TryLock(f *os.File) (bool, error) { return tryLock(f) }

// TryLockShared takes a shared lock on f without waiting: any number of
// holders may share it, and it keeps TryLock from succeeding through
// another open file while one of them holds it. It reports false, with a
// nil error, when the lock is held exclusively. Released like TryLock's.
func TryLockShared(f *os.File) (bool, error) { return tryLockShared(f) }

// OpenLockFile opens name to take a lock on it (TryLock): for reading and
// writing, created first when create is set, so that a holder can
// describe itself in it; or, where it exists but may not be written (a
// read-only mount of a store, a store another user lets others read), for
// reading only: a lock needs no write access, and every mount of the file
// shares the one lock, so a reader there still waits for a writer that
// reaches the file through a writable mount.
func OpenLockFile(name string, create bool) (*os.File, error) {
	flags := os.O_RDWR
	if create {
		flags |= os.O_CREATE
	}
	f, err := os.OpenFile(name, flags, 0o600)
	if errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission) {
		if ro, rerr := os.Open(name); rerr == nil {
			return ro, nil
		}
	}
	return f, err
}
