package osfs

import "os"

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
