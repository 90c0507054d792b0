package faultfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// MemFS is a strict in-memory vfs.FS: it keeps, beside what each file and
// directory holds, what was last synced, and Crash returns the file system a
// power cut would leave: files hold only the data of their last Sync (or
// SyncData), directories only the entries of their last sync (a file created,
// renamed or removed is back as it was, whatever its own syncs), the way
// pebble's vfs.NewCrashableMem models a crash. SyncTo promises nothing, as
// there. Unlike pebble's, its files have Truncate (a truncation is kept by
// the next Sync), which the packs need. Names are absolute paths of the host
// (filepath) on one volume, resolved component by component; symlinks do not exist. A
// MemFS is safe for concurrent use.
type MemFS struct {
	mu    sync.Mutex
	root  *memNode
	locks map[*memNode]bool
}

// memNode is a file or a directory, shared by every name linked to it.
type memNode struct {
	dir bool
	// A file's contents now and at its last sync.
	data, synced []byte
	mod          time.Time
	// A directory's entries now and at its last sync.
	children, syncedChildren map[string]*memNode
}

func newDir() *memNode {
	return &memNode{dir: true, children: map[string]*memNode{}, syncedChildren: map[string]*memNode{}, mod: time.Now()}
}

// NewMem returns an empty MemFS: only its root directory exists, durably.
func NewMem() *MemFS { return &MemFS{root: newDir(), locks: map[*memNode]bool{}} }

var _ vfs.FS = (*MemFS)(nil)

var errNoTruncate = errors.New("file cannot be truncated")

// split returns the components of an absolute name below its volume: a
// MemFS is one volume, and its root (C:\ on Windows, / elsewhere) exists
// durably.
func split(name string) []string {
	name = name[len(filepath.VolumeName(name)):]
	return strings.FieldsFunc(name, func(r rune) bool { return r == '/' || r == filepath.Separator })
}

// lookup returns the node at name, or nil. mu is held.
func (y *MemFS) lookup(name string) *memNode {
	n := y.root
	for _, c := range split(name) {
		if !n.dir {
			return nil
		}
		if n = n.children[c]; n == nil {
			return nil
		}
	}
	return n
}

// parent returns the directory holding name and name's last component.
// mu is held.
func (y *MemFS) parent(op, name string) (*memNode, string, error) {
	parts := split(name)
	if len(parts) == 0 {
		return nil, "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	dir := y.lookup(strings.Join(parts[:len(parts)-1], "/"))
	if dir == nil {
		return nil, "", &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	if !dir.dir {
		return nil, "", &fs.PathError{Op: op, Path: name, Err: syscall.ENOTDIR}
	}
	return dir, parts[len(parts)-1], nil
}

// Create creates name afresh (a new file replaces an existing one).
func (y *MemFS) Create(name string, _ vfs.DiskWriteCategory) (vfs.File, error) {
	y.mu.Lock()
	defer y.mu.Unlock()
	dir, base, err := y.parent("create", name)
	if err != nil {
		return nil, err
	}
	if old := dir.children[base]; old != nil && old.dir {
		return nil, &fs.PathError{Op: "create", Path: name, Err: syscall.EISDIR}
	}
	n := &memNode{mod: time.Now()}
	dir.children[base] = n
	return &memFile{fs: y, n: n, name: name, read: true, write: true}, nil
}

// Link adds newname as another name of file oldname.
func (y *MemFS) Link(oldname, newname string) error {
	y.mu.Lock()
	defer y.mu.Unlock()
	n := y.lookup(oldname)
	if n == nil || n.dir {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: fs.ErrNotExist}
	}
	dir, base, err := y.parent("link", newname)
	if err != nil {
		return err
	}
	if dir.children[base] != nil {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: fs.ErrExist}
	}
	dir.children[base] = n
	return nil
}

func (y *MemFS) open(op, name string, write, create bool) (vfs.File, error) {
	y.mu.Lock()
	defer y.mu.Unlock()
	n := y.lookup(name)
	if n == nil && create {
		dir, base, err := y.parent(op, name)
		if err != nil {
			return nil, err
		}
		n = &memNode{mod: time.Now()}
		dir.children[base] = n
	}
	if n == nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	if n.dir && write {
		return nil, &fs.PathError{Op: op, Path: name, Err: syscall.EISDIR}
	}
	return &memFile{fs: y, n: n, name: name, read: true, write: write}, nil
}

// Open opens name for reading.
func (y *MemFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := y.open("open", name, false, false)
	if err == nil {
		for _, o := range opts {
			o.Apply(f)
		}
	}
	return f, err
}

// OpenReadWrite opens name for reading and writing, creating it if need be.
func (y *MemFS) OpenReadWrite(name string, _ vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := y.open("open", name, true, true)
	if err == nil {
		for _, o := range opts {
			o.Apply(f)
		}
	}
	return f, err
}

// OpenDir opens directory name; its Sync makes its entries durable.
func (y *MemFS) OpenDir(name string) (vfs.File, error) {
	f, err := y.open("open", name, false, false)
	if err == nil && !f.(*memFile).n.dir {
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.ENOTDIR}
	}
	return f, err
}

// Remove removes a file or an empty directory.
func (y *MemFS) Remove(name string) error {
	y.mu.Lock()
	defer y.mu.Unlock()
	dir, base, err := y.parent("remove", name)
	if err != nil {
		return err
	}
	n := dir.children[base]
	switch {
	case n == nil:
		return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
	case n.dir && len(n.children) > 0:
		return &fs.PathError{Op: "remove", Path: name, Err: syscall.ENOTEMPTY}
	}
	delete(dir.children, base)
	return nil
}

// RemoveAll removes name and all it holds; a missing name is no error.
func (y *MemFS) RemoveAll(name string) error {
	y.mu.Lock()
	defer y.mu.Unlock()
	dir, base, err := y.parent("remove", name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	delete(dir.children, base)
	return nil
}

// Rename moves oldname to newname, replacing a file there.
func (y *MemFS) Rename(oldname, newname string) error {
	y.mu.Lock()
	defer y.mu.Unlock()
	odir, obase, err := y.parent("rename", oldname)
	if err != nil {
		return err
	}
	n := odir.children[obase]
	if n == nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: fs.ErrNotExist}
	}
	ndir, nbase, err := y.parent("rename", newname)
	if err != nil {
		return err
	}
	if old := ndir.children[nbase]; old != nil && old.dir && (!n.dir || len(old.children) > 0) {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: syscall.EEXIST}
	}
	delete(odir.children, obase)
	ndir.children[nbase] = n
	return nil
}

// ReuseForWrite renames oldname to newname and opens it for writing.
func (y *MemFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	if err := y.Rename(oldname, newname); err != nil {
		return nil, err
	}
	return y.open("open", newname, true, false)
}

// MkdirAll creates dir and its missing parents.
func (y *MemFS) MkdirAll(dir string, _ os.FileMode) error {
	y.mu.Lock()
	defer y.mu.Unlock()
	n := y.root
	for _, c := range split(dir) {
		next := n.children[c]
		if next == nil {
			next = newDir()
			n.children[c] = next
		}
		if !next.dir {
			return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
		}
		n = next
	}
	return nil
}

// Lock takes an exclusive lock on name, creating it if need be.
func (y *MemFS) Lock(name string) (io.Closer, error) {
	f, err := y.open("lock", name, true, true)
	if err != nil {
		return nil, err
	}
	n := f.(*memFile).n
	y.mu.Lock()
	defer y.mu.Unlock()
	if y.locks[n] {
		return nil, &fs.PathError{Op: "lock", Path: name, Err: syscall.EAGAIN}
	}
	y.locks[n] = true
	return lockCloser(func() error {
		y.mu.Lock()
		defer y.mu.Unlock()
		delete(y.locks, n)
		return nil
	}), nil
}

type lockCloser func() error

func (c lockCloser) Close() error { return c() }

// List returns the names in directory dir, sorted.
func (y *MemFS) List(dir string) ([]string, error) {
	y.mu.Lock()
	defer y.mu.Unlock()
	n := y.lookup(dir)
	if n == nil {
		return nil, &fs.PathError{Op: "readdir", Path: dir, Err: fs.ErrNotExist}
	}
	if !n.dir {
		return nil, &fs.PathError{Op: "readdir", Path: dir, Err: syscall.ENOTDIR}
	}
	names := make([]string, 0, len(n.children))
	for c := range n.children {
		names = append(names, c)
	}
	slices.Sort(names)
	return names, nil
}

// Stat describes name.
func (y *MemFS) Stat(name string) (vfs.FileInfo, error) {
	y.mu.Lock()
	defer y.mu.Unlock()
	n := y.lookup(name)
	if n == nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
	}
	return n.info(filepath.Base(name)), nil
}

func (y *MemFS) PathBase(p string) string       { return filepath.Base(p) }
func (y *MemFS) PathJoin(elem ...string) string { return filepath.Join(elem...) }
func (y *MemFS) PathDir(p string) string        { return filepath.Dir(p) }
func (y *MemFS) Unwrap() vfs.FS                 { return nil }

// GetDiskUsage reports a disk with room to spare.
func (y *MemFS) GetDiskUsage(string) (vfs.DiskUsage, error) {
	return vfs.DiskUsage{AvailBytes: 1 << 40, TotalBytes: 1 << 40}, nil
}

// info describes n (under y.mu, or n's file's own lock: data is read once).
func (n *memNode) info(name string) vfs.FileInfo {
	return memInfo{name: name, size: int64(len(n.data)), dir: n.dir, mod: n.mod}
}

type memInfo struct {
	name string
	size int64
	dir  bool
	mod  time.Time
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) ModTime() time.Time { return i.mod }
func (i memInfo) IsDir() bool        { return i.dir }
func (i memInfo) Sys() any           { return nil }
func (i memInfo) DeviceID() vfs.DeviceID {
	return vfs.DeviceID{}
}
func (i memInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o700
	}
	return 0o600
}
