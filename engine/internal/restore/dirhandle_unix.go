//go:build unix

package restore

import (
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"

	"github.com/ckpt/ckpt/internal/osfs"
)

// dirHandle is a directory's own descriptor, kept open beside its os.Root,
// through which a restore opens the directory's subdirectories' handles,
// and creates and renames its files, with one system call each: os.Root's
// Open and OpenFile add four fcntl calls and an epoll_ctl to every file
// they open (to try the file with the poller, which refuses a regular
// file or a directory, and undo that), and its Rename an lstat of the
// target; a clone of 90,000 files made six calls per file, and eight per
// directory, that changed nothing.
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
// reached, one name at a time, lies inside the workspace as its os.Root
// does.
func openSubHandle(parent *dirRoot, base string) (dirHandle, error) {
	for {
		fd, err := unix.Openat(parent.handle.fd, base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		switch err {
		case nil:
			return dirHandle{fd}, nil
		case unix.EINTR:
			continue
		}
		return dirHandle{}, &fs.PathError{Op: "open", Path: base, Err: err}
	}
}

func (h dirHandle) close() { unix.Close(h.fd) }

// openDirsBound is how many directories a restore keeps open while
// unused: each holds two descriptors (its os.Root and its handle), so an
// eighth of the files the process may open (Go raises the soft limit to
// the hard one at start), between minOpenDirs and maxOpenDirs.
func openDirsBound() int {
	var l unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &l) != nil {
		return minOpenDirs
	}
	return int(min(max(l.Cur/8, minOpenDirs), maxOpenDirs))
}

// createExcl creates base in dr for writing with permissions perm, never
// following or replacing an existing entry.
func (dr *dirRoot) createExcl(base string, perm fs.FileMode) (newFile, error) {
	for {
		fd, err := unix.Openat(dr.handle.fd, base, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
		switch err {
		case nil:
			return fdFile{fd, base}, nil
		case unix.EINTR:
			continue
		}
		return nil, &fs.PathError{Op: "open", Path: base, Err: err}
	}
}

// rename renames oldname onto newname in dr. Neither is a directory: a
// restore renames only its temporary files and links, and renameat
// itself refuses to replace a directory with one.
func (dr *dirRoot) rename(oldname, newname string) error {
	if err := unix.Renameat(dr.handle.fd, oldname, dr.handle.fd, newname); err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	return nil
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
