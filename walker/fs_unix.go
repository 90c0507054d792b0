//go:build linux || darwin

package walker

import (
	"errors"
	"io/fs"
	"slices"

	"golang.org/x/sys/unix"
)

// dirFD is an open directory: a file descriptor, so that subdirectories
// are opened and entries lstatted relative to it (openat, fstatat) and a
// directory renamed or swapped for a symlink mid-walk is never followed.
type dirFD = int

// openRoot opens the workspace directory (already symlink-free) and
// returns its lstat data.
func openRoot(path string) (dirFD, fileStat, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fileStat{}, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, fileStat{}, &fs.PathError{Op: "fstat", Path: path, Err: err}
	}
	return fd, statOf(&st), nil
}

// openSub opens the subdirectory name of parent without following a
// symlink.
func openSub(parent dirFD, name string) (dirFD, error) {
	return unix.Openat(parent, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
}

func closeDir(d dirFD) { unix.Close(d) }

// readDir returns the names in d, without "." and "..", sorted by bytes,
// and no stat data: the kernel's listing carries no sizes or times, so
// entry lstats each name (fstatat) once the ignore rules want it.
func readDir(d dirFD) ([]string, []fileStat, error) {
	names, err := readNames(d)
	if err != nil {
		return nil, nil, err
	}
	slices.Sort(names)
	return names, nil, nil
}

// lstatAt returns the lstat data of name in d (fstatat, no follow).
func lstatAt(d dirFD, name string) (fileStat, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fileStat{}, err
	}
	return statOf(&st), nil
}

func statOf(st *unix.Stat_t) fileStat {
	return fileStat{
		typ: typeOf(uint32(st.Mode) & unix.S_IFMT), mode: uint32(st.Mode) & 0o7777, size: st.Size,
		mtimeNs: st.Mtim.Nano(), ctimeNs: st.Ctim.Nano(),
		ino: uint64(st.Ino), dev: uint64(st.Dev), nlink: uint32(st.Nlink), uid: st.Uid, gid: st.Gid,
	}
}

func typeOf(ifmt uint32) fileType {
	switch ifmt {
	case unix.S_IFREG:
		return typeFile
	case unix.S_IFDIR:
		return typeDir
	case unix.S_IFLNK:
		return typeSymlink
	case unix.S_IFIFO:
		return typeFIFO
	case unix.S_IFSOCK:
		return typeSocket
	case unix.S_IFCHR, unix.S_IFBLK:
		return typeDevice
	}
	return typeOther
}

// statDir returns the identity of the directory at path (following
// symlinks), for Options.ExcludeDirs.
func statDir(path string) (devIno, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return devIno{}, err
	}
	return devIno{uint64(st.Dev), uint64(st.Ino)}, nil
}

// readlinkAt returns the target text of the symlink name in d; size is its
// lstat size, a hint.
func readlinkAt(d dirFD, name string, size int64) (string, error) {
	buf := make([]byte, max(size+1, 256))
	for {
		n, err := unix.Readlinkat(d, name, buf)
		if err != nil {
			return "", err
		}
		if n < len(buf) {
			return string(buf[:n]), nil
		}
		buf = make([]byte, 2*len(buf))
	}
}

// readPatternFile reads the pattern file name of d without following a
// symlink (git does not follow a symlinked .gitignore).
func readPatternFile(d dirFD, name string) ([]byte, error) {
	return readRegular(d, name, unix.O_NOFOLLOW)
}

// readPatternPath reads the pattern file at an absolute path.
func readPatternPath(path string) ([]byte, error) {
	return readRegular(unix.AT_FDCWD, path, 0)
}

// readRegular reads a regular file of dirfd, at most maxPatternFile bytes.
// It never blocks on a FIFO: anything but a regular file is fs.ErrInvalid.
func readRegular(dirfd int, name string, flags int) ([]byte, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|flags, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if uint32(st.Mode)&unix.S_IFMT != unix.S_IFREG || st.Size > maxPatternFile {
		return nil, fs.ErrInvalid
	}
	buf := make([]byte, 0, st.Size+1)
	for {
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 || len(buf)+n > maxPatternFile {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, len(buf))
		}
	}
}

// isNotDir reports an error saying a path component is not a directory.
func isNotDir(err error) bool { return errors.Is(err, unix.ENOTDIR) }

// isVanished reports an open error saying the directory was replaced by
// another type of file (ENOTDIR) or by a symlink (ELOOP from O_NOFOLLOW).
func isVanished(err error) bool { return isNotDir(err) || errors.Is(err, unix.ELOOP) }
