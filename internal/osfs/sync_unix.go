//go:build unix

package osfs

import (
	"os"

	"golang.org/x/sys/unix"
)

// DataSyncFd is DataSync of the open file descriptor fd.
func DataSyncFd(fd int) error { return dataSyncFd(fd) }

// SyncFd makes the file open as fd durable, its metadata (its mode among
// them) with its data: fsync(2), where DataSyncFd may flush the data alone
// (Linux's fdatasync leaves a mode change unwritten); on macOS,
// F_FULLFSYNC (DataSyncFd's), which flushes both through the drive's
// cache.
func SyncFd(fd int) error { return syncFd(fd) }

// fsyncFd is fsync(2), retried when a signal interrupts it.
func fsyncFd(fd int) error {
	for {
		err := unix.Fsync(fd)
		if err != unix.EINTR {
			return err
		}
	}
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
