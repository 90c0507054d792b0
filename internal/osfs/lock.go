package osfs

import "os"

// TryLock takes an exclusive lock on f without waiting. It reports false,
// with a nil error, when another holder has the lock: another process, or
// another open file of the same process (so an Engine that was never closed
// still counts as a holder). The lock is released when f is closed or its
// process dies, so a crashed holder never leaves it behind. Unix: flock(2);
// Windows: LockFileEx on the file's first byte.
func TryLock(f *os.File) (bool, error) { return tryLock(f) }
