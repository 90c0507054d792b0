package osfs

import (
	"os"

	"golang.org/x/sys/unix"
)

func dataSync(f *os.File) error { return dataSyncFd(int(f.Fd())) }

func dataSyncFd(fd int) error {
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_FULLFSYNC, 0); err == nil {
		return nil
	}
	// Some filesystems (network mounts, FAT) refuse F_FULLFSYNC.
	return fsyncFd(fd)
}

// syncFd is SyncFd: F_FULLFSYNC flushes the metadata with the data.
func syncFd(fd int) error { return dataSyncFd(fd) }

func syncFilesystem(*os.File) error { return ErrNoFilesystemSync }

func soundFilesystemSync(*os.File, string) bool { return false }

func dirtyBytes() (int64, bool) { return 0, false }

const hasFilesystemSync = false
