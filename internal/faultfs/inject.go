// Package faultfs is test support for the store's one file-system seam,
// pebble's vfs.FS: Wrap fails the operations an Injector picks, in the shape
// of pebble's vfs/errorfs (which cannot pass a pack's Truncate through), and
// MemFS is a strict in-memory vfs.FS that a test can crash, keeping only
// what was synced. The workspace seam of a restore (engine/internal/restore)
// names its operations with the same OpKinds, so one Injector counts and
// fails the operations of both seams.
package faultfs

import (
	"fmt"
	"io"
	"os"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// OpKind is the kind of a file-system operation.
type OpKind int

// The operations of vfs.FS and vfs.File, then those only the workspace
// seam of a restore makes.
const (
	OpCreate OpKind = iota
	OpLink
	OpOpen
	OpOpenReadWrite
	OpOpenDir
	OpRemove
	OpRemoveAll
	OpRename
	OpReuseForWrite
	OpMkdirAll
	OpLock
	OpList
	OpStat
	OpFileRead
	OpFileWrite
	OpFileSync // Sync, SyncData and SyncTo, of a file or of a directory
	OpFileTruncate
	OpFileClose
	OpSymlink
	OpChmod
	OpFileChmod
	OpSyncFS // a sync of the whole file system
)

var kindNames = [...]string{"create", "link", "open", "open-rw", "open-dir", "remove", "remove-all",
	"rename", "reuse-for-write", "mkdir", "lock", "list", "stat", "read", "write", "sync",
	"truncate", "close", "symlink", "chmod", "fchmod", "syncfs"}

func (k OpKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("op%d", int(k))
}

// Changes reports whether an operation of kind k can change what is on
// disk (what a fault suite fails in turn). Opening a file for writing
// changes nothing until it is written.
func (k OpKind) Changes() bool {
	switch k {
	case OpOpen, OpOpenReadWrite, OpOpenDir, OpLock, OpList, OpStat, OpFileRead, OpFileClose:
		return false
	}
	return true
}

// Op is one operation on the named path.
type Op struct {
	Kind OpKind
	Path string
}

func (o Op) String() string { return o.Kind.String() + " " + o.Path }

// Injector decides, before each operation, whether it fails: a non-nil
// error is returned in its place and the operation does not happen.
type Injector interface {
	MaybeError(op Op) error
}

// InjectorFunc is an Injector of a function.
type InjectorFunc func(Op) error

// MaybeError calls f.
func (f InjectorFunc) MaybeError(op Op) error { return f(op) }

// tearer is an Injector whose failed writes first write half their bytes,
// the way a full disk tears a write.
type tearer interface{ TearsWrites() bool }

// Wrap returns fs with every operation, and every operation on the files it
// opens, first put to inj. Files keep a Truncate method when fs's have one.
func Wrap(fs vfs.FS, inj Injector) vfs.FS { return &wrapFS{fs: fs, inj: inj} }

type wrapFS struct {
	fs  vfs.FS
	inj Injector
}

func (w *wrapFS) file(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &wrapFile{f: f, name: name, inj: w.inj}, nil
}

func (w *wrapFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	if err := w.inj.MaybeError(Op{OpCreate, name}); err != nil {
		return nil, err
	}
	f, err := w.fs.Create(name, c)
	return w.file(name, f, err)
}

func (w *wrapFS) Link(oldname, newname string) error {
	if err := w.inj.MaybeError(Op{OpLink, newname}); err != nil {
		return err
	}
	return w.fs.Link(oldname, newname)
}

func (w *wrapFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	if err := w.inj.MaybeError(Op{OpOpen, name}); err != nil {
		return nil, err
	}
	f, err := w.fs.Open(name, opts...)
	return w.file(name, f, err)
}

func (w *wrapFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	if err := w.inj.MaybeError(Op{OpOpenReadWrite, name}); err != nil {
		return nil, err
	}
	f, err := w.fs.OpenReadWrite(name, c, opts...)
	return w.file(name, f, err)
}

func (w *wrapFS) OpenDir(name string) (vfs.File, error) {
	if err := w.inj.MaybeError(Op{OpOpenDir, name}); err != nil {
		return nil, err
	}
	f, err := w.fs.OpenDir(name)
	return w.file(name, f, err)
}

func (w *wrapFS) Remove(name string) error {
	if err := w.inj.MaybeError(Op{OpRemove, name}); err != nil {
		return err
	}
	return w.fs.Remove(name)
}

func (w *wrapFS) RemoveAll(name string) error {
	if err := w.inj.MaybeError(Op{OpRemoveAll, name}); err != nil {
		return err
	}
	return w.fs.RemoveAll(name)
}

func (w *wrapFS) Rename(oldname, newname string) error {
	if err := w.inj.MaybeError(Op{OpRename, newname}); err != nil {
		return err
	}
	return w.fs.Rename(oldname, newname)
}

func (w *wrapFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	if err := w.inj.MaybeError(Op{OpReuseForWrite, newname}); err != nil {
		return nil, err
	}
	f, err := w.fs.ReuseForWrite(oldname, newname, c)
	return w.file(newname, f, err)
}

func (w *wrapFS) MkdirAll(dir string, perm os.FileMode) error {
	if err := w.inj.MaybeError(Op{OpMkdirAll, dir}); err != nil {
		return err
	}
	return w.fs.MkdirAll(dir, perm)
}

func (w *wrapFS) Lock(name string) (io.Closer, error) {
	if err := w.inj.MaybeError(Op{OpLock, name}); err != nil {
		return nil, err
	}
	return w.fs.Lock(name)
}

func (w *wrapFS) List(dir string) ([]string, error) {
	if err := w.inj.MaybeError(Op{OpList, dir}); err != nil {
		return nil, err
	}
	return w.fs.List(dir)
}

func (w *wrapFS) Stat(name string) (vfs.FileInfo, error) {
	if err := w.inj.MaybeError(Op{OpStat, name}); err != nil {
		return nil, err
	}
	return w.fs.Stat(name)
}

func (w *wrapFS) PathBase(p string) string                     { return w.fs.PathBase(p) }
func (w *wrapFS) PathJoin(elem ...string) string               { return w.fs.PathJoin(elem...) }
func (w *wrapFS) PathDir(p string) string                      { return w.fs.PathDir(p) }
func (w *wrapFS) GetDiskUsage(p string) (vfs.DiskUsage, error) { return w.fs.GetDiskUsage(p) }
func (w *wrapFS) Unwrap() vfs.FS                               { return w.fs }

// wrapFile is a file of a wrapFS.
type wrapFile struct {
	f    vfs.File
	name string
	inj  Injector
}

func (f *wrapFile) maybe(k OpKind) error { return f.inj.MaybeError(Op{k, f.name}) }

// torn writes half of p when inj tears writes, and returns err.
func (f *wrapFile) torn(p []byte, off int64, at bool, err error) (int, error) {
	t, ok := f.inj.(tearer)
	if !ok || !t.TearsWrites() {
		return 0, err
	}
	var n int
	if at {
		n, _ = f.f.WriteAt(p[:len(p)/2], off)
	} else {
		n, _ = f.f.Write(p[:len(p)/2])
	}
	return n, err
}

func (f *wrapFile) Close() error {
	if err := f.maybe(OpFileClose); err != nil {
		return err
	}
	return f.f.Close()
}

func (f *wrapFile) Read(p []byte) (int, error) {
	if err := f.maybe(OpFileRead); err != nil {
		return 0, err
	}
	return f.f.Read(p)
}

func (f *wrapFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.maybe(OpFileRead); err != nil {
		return 0, err
	}
	return f.f.ReadAt(p, off)
}

func (f *wrapFile) Write(p []byte) (int, error) {
	if err := f.maybe(OpFileWrite); err != nil {
		return f.torn(p, 0, false, err)
	}
	return f.f.Write(p)
}

func (f *wrapFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.maybe(OpFileWrite); err != nil {
		return f.torn(p, off, true, err)
	}
	return f.f.WriteAt(p, off)
}

func (f *wrapFile) Preallocate(off, n int64) error { return f.f.Preallocate(off, n) }
func (f *wrapFile) Stat() (vfs.FileInfo, error)    { return f.f.Stat() }
func (f *wrapFile) Prefetch(off, n int64) error    { return f.f.Prefetch(off, n) }
func (f *wrapFile) Fd() uintptr                    { return f.f.Fd() }

func (f *wrapFile) Sync() error {
	if err := f.maybe(OpFileSync); err != nil {
		return err
	}
	return f.f.Sync()
}

func (f *wrapFile) SyncData() error {
	if err := f.maybe(OpFileSync); err != nil {
		return err
	}
	return f.f.SyncData()
}

func (f *wrapFile) SyncTo(length int64) (bool, error) {
	if err := f.maybe(OpFileSync); err != nil {
		return false, err
	}
	return f.f.SyncTo(length)
}

// Truncate truncates the wrapped file, which must have a Truncate method.
func (f *wrapFile) Truncate(size int64) error {
	if err := f.maybe(OpFileTruncate); err != nil {
		return err
	}
	t, ok := f.f.(interface{ Truncate(int64) error })
	if !ok {
		return &os.PathError{Op: "truncate", Path: f.name, Err: errNoTruncate}
	}
	return t.Truncate(size)
}
