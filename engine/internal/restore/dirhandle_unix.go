//go:build unix

package restore

import (
	"io"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ckpt/ckpt/internal/osfs"
)

// dirHandle is a directory's own descriptor, through which a restore
// opens the directory's subdirectories' handles, and creates, renames,
// removes and looks up its entries, with one system call each: os.Root's
// Open and OpenFile add four fcntl calls and an epoll_ctl to every file
// they open (to try the file with the poller, which refuses a regular
// file or a directory, and undo that), its Rename an lstat of the target,
// and its OpenRoot an fstat and a finalizer to every directory; a clone of
// 90,000 files made six calls per file, and eight per directory, that
// changed nothing.
type dirHandle struct{ fd int }

// openDirHandle opens the directory r is rooted at (the workspace's).
func openDirHandle(r *os.Root) (dirHandle, error) {
	f, err := r.Open(".")
	if err != nil {
		return dirHandle{}, err
	}
	defer f.Close()
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return dirHandle{}, &fs.PathError{Op: "dup", Path: ".", Err: err}
	}
	return dirHandle{fd}, nil
}

// openSubHandle opens subdirectory base of parent, never following a
// symlink: the handle of a directory the walk from the workspace's handle
// reached, one name at a time (names dirRoots.in took), lies inside the
// workspace.
func openSubHandle(parent dirHandle, base string) (dirHandle, error) {
	fd, err := retryEINTR(func() (int, error) {
		return unix.Openat(parent.fd, base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return dirHandle{}, &fs.PathError{Op: "open", Path: base, Err: err}
	}
	return dirHandle{fd}, nil
}

// retryEINTR calls f again while it is interrupted by a signal (Go's
// preemption signal interrupts calls on FUSE, NFS and CIFS).
func retryEINTR(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if err != unix.EINTR {
			return n, err
		}
	}
}

// noEINTR is retryEINTR for a call with no result.
func noEINTR(f func() error) error {
	_, err := retryEINTR(func() (int, error) { return 0, f() })
	return err
}

// closedHandle is what a closed dirRoot holds: a use after close fails
// (EBADF) instead of reaching whatever the descriptor's number is reused for.
var closedHandle = dirHandle{fd: -1}

func (h dirHandle) close() { unix.Close(h.fd) }

// openDirsBound is how many directories a restore keeps open while
// unused, each one descriptor: an eighth of the files the process may open
// (Go raises the soft limit to the hard one at start), between
// minOpenDirs and maxOpenDirs.
func openDirsBound() int {
	var l unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &l) != nil {
		return minOpenDirs
	}
	return int(min(max(l.Cur/8, minOpenDirs), maxOpenDirs))
}

// createExcl creates base in h for writing with permissions perm, never
// following or replacing an existing entry.
func (h dirHandle) createExcl(base string, perm fs.FileMode) (newFile, error) {
	fd, err := retryEINTR(func() (int, error) {
		return unix.Openat(h.fd, base, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: base, Err: err}
	}
	return fdFile{fd, base}, nil
}

// rename renames oldname onto newname in h. Neither is a directory: a
// restore renames only its temporary files and links, and renameat
// itself refuses to replace a directory with one.
func (h dirHandle) rename(oldname, newname string) error {
	if err := noEINTR(func() error { return unix.Renameat(h.fd, oldname, h.fd, newname) }); err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	return nil
}

// remove removes base from h: a file, a symlink or an empty directory.
// When both removals fail, the directory's error is the one returned
// unless base is no directory (as os.Remove decides).
func (h dirHandle) remove(base string) error {
	err := noEINTR(func() error { return unix.Unlinkat(h.fd, base, 0) })
	if err == nil {
		return nil
	}
	if errDir := noEINTR(func() error { return unix.Unlinkat(h.fd, base, unix.AT_REMOVEDIR) }); errDir == nil {
		return nil
	} else if errDir != unix.ENOTDIR {
		err = errDir
	}
	return &fs.PathError{Op: "remove", Path: base, Err: err}
}

// mkdir makes directory base in h with permissions perm.
func (h dirHandle) mkdir(base string, perm fs.FileMode) error {
	if err := noEINTR(func() error { return unix.Mkdirat(h.fd, base, permBits(perm)) }); err != nil {
		return &fs.PathError{Op: "mkdir", Path: base, Err: err}
	}
	return nil
}

// symlink makes base in h a symlink to target.
func (h dirHandle) symlink(target, base string) error {
	if err := noEINTR(func() error { return unix.Symlinkat(target, h.fd, base) }); err != nil {
		return &fs.PathError{Op: "symlink", Path: base, Err: err}
	}
	return nil
}

// chmod sets the mode of base in h, which must not be a symlink (the
// caller resolves a symlink from the workspace root, which follows it
// only inside the workspace): base is changed without following a final
// symlink (chmodNoFollow), so one put there meanwhile is not followed
// either.
func (h dirHandle) chmod(base string, mode fs.FileMode) error {
	var st unix.Stat_t
	err := noEINTR(func() error { return unix.Fstatat(h.fd, base, &st, unix.AT_SYMLINK_NOFOLLOW) })
	if err == nil && uint32(st.Mode)&unix.S_IFMT == unix.S_IFLNK {
		err = unix.ELOOP
	}
	if err == nil {
		err = noEINTR(func() error { return chmodNoFollow(h.fd, base, permBits(mode)) })
	}
	if err != nil {
		return &fs.PathError{Op: "chmod", Path: base, Err: err}
	}
	return nil
}

// syncFile makes file base in h durable, data and metadata
// (osfs.SyncFd), through a descriptor opened read-only without
// following a final symlink, and without blocking should a pipe stand
// there.
func (h dirHandle) syncFile(base string) error {
	fd, err := retryEINTR(func() (int, error) {
		return unix.Openat(h.fd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	})
	if err == nil {
		err = osfs.SyncFd(fd)
		unix.Close(fd)
	}
	if err != nil {
		return &fs.PathError{Op: "sync", Path: base, Err: err}
	}
	return nil
}

// lstat describes base in h without following a final symlink.
func (h dirHandle) lstat(base string) (fs.FileInfo, error) {
	fi := &statInfo{name: base}
	if err := noEINTR(func() error { return unix.Fstatat(h.fd, base, &fi.st, unix.AT_SYMLINK_NOFOLLOW) }); err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: base, Err: err}
	}
	return fi, nil
}

// hold opens base in h with flags (osfs.HoldFlags), never following a
// final symlink.
func (h dirHandle) hold(base string, flags int) (io.Closer, error) {
	fd, err := retryEINTR(func() (int, error) {
		return unix.Openat(h.fd, base, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: base, Err: err}
	}
	return os.NewFile(uintptr(fd), base), nil
}

// statInfo is the fs.FileInfo of an lstat through a dirHandle.
type statInfo struct {
	name string
	st   unix.Stat_t
}

func (fi *statInfo) Name() string       { return fi.name }
func (fi *statInfo) Size() int64        { return fi.st.Size }
func (fi *statInfo) ModTime() time.Time { return time.Unix(fi.st.Mtim.Unix()) }
func (fi *statInfo) IsDir() bool        { return fi.Mode().IsDir() }
func (fi *statInfo) Sys() any           { return &fi.st }

// Mode is st_mode as an fs.FileMode, as os.Lstat gives it.
func (fi *statInfo) Mode() fs.FileMode {
	mode := uint32(fi.st.Mode)
	m := fileMode(mode)
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	return m
}

// fdFile is a file createExcl created, written through its descriptor
// alone: an *os.File around it would cost a system call to open and a
// finalizer to collect, for each of a clone's files.
type fdFile struct {
	fd   int
	name string // for errors
}

func (f fdFile) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := unix.Write(f.fd, p[n:])
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return n, &fs.PathError{Op: "write", Path: f.name, Err: err}
		case m == 0:
			return n, io.ErrShortWrite
		}
		n += m
	}
	return n, nil
}

func (f fdFile) Chmod(mode fs.FileMode) error {
	if err := unix.Fchmod(f.fd, permBits(mode)); err != nil {
		return &fs.PathError{Op: "chmod", Path: f.name, Err: err}
	}
	return nil
}

func (f fdFile) Sync() error {
	if err := osfs.DataSyncFd(f.fd); err != nil {
		return &fs.PathError{Op: "sync", Path: f.name, Err: err}
	}
	return nil
}

func (f fdFile) Close() error {
	if err := unix.Close(f.fd); err != nil {
		return &fs.PathError{Op: "close", Path: f.name, Err: err}
	}
	return nil
}
