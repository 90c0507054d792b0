//go:build unix && !linux

package restore

import "golang.org/x/sys/unix"

// chmodNoFollow sets the mode of base in directory dirfd without following
// a final symlink (these systems change a symlink's own mode instead).
func chmodNoFollow(dirfd int, base string, mode uint32) error {
	return unix.Fchmodat(dirfd, base, mode, unix.AT_SYMLINK_NOFOLLOW)
}
