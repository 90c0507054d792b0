//go:build unix

package osfs

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// regular reads straight from the descriptor: an *os.File would cost two
// more syscalls per file registering it with the runtime's poller, which
// shows on saves of many small files.
type regular struct {
	fd     int
	path   string
	opened Stamp
	err    error
}

func openRegular(path string) (regular, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return regular{}, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return regular{}, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return regular{}, &os.PathError{Op: "open", Path: path, Err: ErrNotRegular}
	}
	return regular{fd: fd, path: path, opened: stampOf(&st)}, nil
}

// Stamp returns the open file's current size, modification and change times,
// inode number and permission bits.
func (r *regular) Stamp() (Stamp, error) {
	var st unix.Stat_t
	if err := unix.Fstat(r.fd, &st); err != nil {
		return Stamp{}, &os.PathError{Op: "fstat", Path: r.path, Err: err}
	}
	return stampOf(&st), nil
}

func stampOf(st *unix.Stat_t) Stamp {
	return Stamp{Size: st.Size, ModTime: st.Mtim.Nano(), ChangeTime: st.Ctim.Nano(), Inode: uint64(st.Ino), Perm: uint32(st.Mode) & 0o7777}
}

func (r *regular) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, err := unix.Read(r.fd, p)
	for err == unix.EINTR {
		n, err = unix.Read(r.fd, p)
	}
	switch {
	case err != nil:
		r.err = &os.PathError{Op: "read", Path: r.path, Err: err}
		return 0, r.err
	case n < len(p):
		return n, io.EOF
	}
	return n, nil
}

// Err is the file's read error, nil when every read succeeded.
func (r *regular) Err() error { return r.err }

// Close releases the descriptor.
func (r *regular) Close() error { return unix.Close(r.fd) }
