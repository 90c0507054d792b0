//go:build unix

package osfs

import (
	"io/fs"

	"golang.org/x/sys/unix"
)

// checkWritable asks the kernel (access(2), with the process's real ids,
// which a CLI's are).
func checkWritable(name string) error {
	if err := unix.Access(name, unix.W_OK); err != nil {
		return &fs.PathError{Op: "write", Path: name, Err: err}
	}
	return nil
}
