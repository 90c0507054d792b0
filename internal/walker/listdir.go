package walker

import (
	"io/fs"
	"slices"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/ckpt/ckpt/internal/walker/ignore"
)

// maxPatternFile bounds the pattern files read (git caps .gitattributes at
// 100 MiB too); larger ones are ignored.
const maxPatternFile = 100 << 20

var direntBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// list reads directory n (whose fd is open), loads its pattern files and
// fills n.dir.Entries with its included entries, reporting skipped ones.
func (w *walk[T]) list(n *node[T]) error {
	names, err := readNames(n.fd)
	if err != nil {
		return &fs.PathError{Op: "readdirent", Path: n.dir.Path, Err: err}
	}
	slices.Sort(names)
	set := ignore.LoadDir(func(name string) ([]byte, error) {
		if _, found := slices.BinarySearch(names, name); !found {
			return nil, fs.ErrNotExist
		}
		return readPatternFile(n.fd, name, unix.O_NOFOLLOW)
	})
	if n.parent == nil {
		for l := range set {
			set[l] = append(slices.Clip(w.cfg.global[l]), set[l]...)
		}
	}
	n.rules = n.rules.Child(n.dir.Path, set)
	entries := make([]Entry, 0, len(names))
	for _, name := range names {
		if name == ignore.GitDir {
			continue
		}
		if e, ok := w.entry(n, name); ok {
			entries = append(entries, e)
		}
	}
	n.dir.Entries = entries
	return nil
}

// entry lstats one name of n and decides whether it is included.
func (w *walk[T]) entry(n *node[T], name string) (Entry, bool) {
	rel := join(n.dir.Path, name)
	var st unix.Stat_t
	if err := unix.Fstatat(n.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if !n.rules.Ignored(rel, false) || !n.rules.Ignored(rel, true) {
			w.report(rel, &fs.PathError{Op: "lstat", Path: rel, Err: err})
		}
		return Entry{}, false
	}
	typ := uint32(st.Mode) & unix.S_IFMT
	if n.rules.Ignored(rel, typ == unix.S_IFDIR) {
		return Entry{}, false
	}
	e := Entry{
		Name: name, Mode: uint32(st.Mode) & 0o7777, Size: st.Size,
		MtimeNs: st.Mtim.Nano(), CtimeNs: st.Ctim.Nano(),
		Ino: uint64(st.Ino), Dev: uint64(st.Dev),
	}
	switch typ {
	case unix.S_IFREG:
		if w.cfg.maxSize > 0 && st.Size > w.cfg.maxSize {
			w.skip(Skipped{Path: rel, Reason: ReasonTooLarge})
			return Entry{}, false
		}
		if err := w.cfg.perm.check(n.fd, name, &st, unix.R_OK); err != nil {
			w.report(rel, &fs.PathError{Op: "open", Path: rel, Err: err})
			return Entry{}, false
		}
		e.Kind = KindFile
	case unix.S_IFLNK:
		target, err := readlinkat(n.fd, name, st.Size)
		if err != nil {
			w.report(rel, &fs.PathError{Op: "readlink", Path: rel, Err: err})
			return Entry{}, false
		}
		e.Kind, e.Target, e.Size = KindSymlink, target, int64(len(target))
	case unix.S_IFDIR:
		if w.cfg.exclude[devIno{e.Dev, e.Ino}] {
			return Entry{}, false
		}
		if err := w.cfg.perm.check(n.fd, name, &st, unix.R_OK|unix.X_OK); err != nil {
			w.report(rel, &fs.PathError{Op: "open", Path: rel, Err: err})
			return Entry{}, false
		}
		e.Kind, e.Size = KindDir, 0
	default:
		w.skip(Skipped{Path: rel, Reason: specialReason(typ)})
		return Entry{}, false
	}
	return e, true
}

func specialReason(typ uint32) string {
	switch typ {
	case unix.S_IFIFO:
		return ReasonFIFO
	case unix.S_IFSOCK:
		return ReasonSocket
	case unix.S_IFCHR, unix.S_IFBLK:
		return ReasonDevice
	}
	return ReasonOther
}

// readNames returns the names in the directory fd, without "." and "..".
func readNames(fd int) ([]string, error) {
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	var names []string
	for {
		n, err := unix.ReadDirent(fd, *bp)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = unix.ParseDirent((*bp)[:n], -1, names)
	}
}

// readlinkat returns the target text of the symlink name in dirfd; size is
// its lstat size, a hint.
func readlinkat(dirfd int, name string, size int64) (string, error) {
	buf := make([]byte, max(size+1, 256))
	for {
		n, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			return "", err
		}
		if n < len(buf) {
			return string(buf[:n]), nil
		}
		buf = make([]byte, 2*len(buf))
	}
}

// readPatternFile reads a pattern file of dirfd; flags may add O_NOFOLLOW
// (git does not follow a symlinked .gitignore). It never blocks on a FIFO:
// anything but a regular file is an error.
func readPatternFile(dirfd int, name string, flags int) ([]byte, error) {
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
