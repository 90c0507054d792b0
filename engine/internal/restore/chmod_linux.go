package restore

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// chmodNoFollow sets the mode of base in directory dirfd without following
// a final symlink: fchmodat2 (Linux 6.6), else chmodThroughProc; a symlink
// fails either way.
func chmodNoFollow(dirfd int, base string, mode uint32) error {
	err := unix.Fchmodat(dirfd, base, mode, unix.AT_SYMLINK_NOFOLLOW)
	if err != unix.EOPNOTSUPP { // EOPNOTSUPP: no fchmodat2, or a symlink
		return err
	}
	return chmodThroughProc(dirfd, base, mode)
}

// chmodThroughProc opens base with O_PATH, without following it, and
// changes the file it opened through its /proc/self/fd link, which names
// that file and no other; a symlink fails with ELOOP.
func chmodThroughProc(dirfd int, base string, mode uint32) error {
	fd, err := unix.Openat(dirfd, base, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return unix.ELOOP
	}
	return unix.Fchmodat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), mode, 0)
}
