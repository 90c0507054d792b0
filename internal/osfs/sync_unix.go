//go:build unix

package osfs

import (
	"os"

	"golang.org/x/sys/unix"
)

// DataSyncFd is DataSync of the open file descriptor fd.
func DataSyncFd(fd int) error { return dataSyncFd(fd) }

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
