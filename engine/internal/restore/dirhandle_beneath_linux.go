package restore

import (
	"io/fs"

	"golang.org/x/sys/unix"
)

// openBeneath opens directory dir (slash-separated, below top, with no
// ".." element: dirRoots.in) in one call: openat2 resolves it beneath top,
// refusing a symlink anywhere on the way and any step out of top, as a
// walk one name at a time with O_NOFOLLOW does. It fails with errNoBeneath
// where the kernel has no openat2 (before Linux 5.6), a filter refuses it,
// or renames keep racing the lookup.
func openBeneath(top dirHandle, dir string) (dirHandle, error) {
	how := &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	for races := 0; ; {
		fd, err := unix.Openat2(top.fd, dir, how)
		switch {
		case err == nil:
			return dirHandle{fd}, nil
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN && races < maxBeneathRaces: // a rename raced the lookup
			races++
			continue
		case err == unix.EAGAIN, err == unix.ENOSYS, err == unix.EPERM:
			return dirHandle{}, errNoBeneath
		}
		return dirHandle{}, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
}

// maxBeneathRaces is how many lookups raced by renames openBeneath tries
// before it leaves the directory to the walk through its parents.
const maxBeneathRaces = 8
