//go:build unix

package osfs

import (
	"errors"

	"golang.org/x/sys/unix"
)

func isDirNotEmpty(err error) bool {
	return errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST)
}

func isSharingViolation(error) bool { return false }

func isNotDir(err error) bool { return errors.Is(err, unix.ENOTDIR) }

func isSymlinkUnsupported(err error) bool {
	return errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOTSUP)
}
