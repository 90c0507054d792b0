//go:build unix

package osfs

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

func tryLock(f *os.File) (bool, error) { return flock(f, unix.LOCK_EX) }

func tryLockShared(f *os.File) (bool, error) { return flock(f, unix.LOCK_SH) }

// flock takes f's lock of kind how without waiting.
func flock(f *os.File, how int) (bool, error) {
	err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.EWOULDBLOCK):
		return false, nil
	}
	return false, err
}
