//go:build windows

package osfs

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockOffset places the locked byte at 1 GiB: beyond what a lock file
// holds, so its text stays readable while it is locked, and within what
// every Windows file system can address (FAT32 stops at 4 GiB).
const lockOffset = 1 << 30

func tryLock(f *os.File) (bool, error) { return lockByte(f, windows.LOCKFILE_EXCLUSIVE_LOCK) }

func tryLockShared(f *os.File) (bool, error) { return lockByte(f, 0) }

// lockByte locks f's byte at lockOffset without waiting, shared unless
// flags has LOCKFILE_EXCLUSIVE_LOCK.
func lockByte(f *os.File, flags uint32) (bool, error) {
	ol := windows.Overlapped{Offset: lockOffset}
	err := windows.LockFileEx(windows.Handle(f.Fd()), flags|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, windows.ERROR_LOCK_VIOLATION), errors.Is(err, windows.ERROR_IO_PENDING):
		return false, nil
	}
	return false, err
}
