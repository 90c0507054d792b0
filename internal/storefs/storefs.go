// Package storefs is the store's one file-system seam: pebble's vfs.FS,
// under the index, the packs, the restore journal and every other file of
// the store directory, so that one fault injector and one simulated power
// cut (internal/faultfs) reach them all. It adds the durable steps each
// layer needs on top of vfs.FS.
//
// Durability rests on these calls of OS, per platform:
//   - a file's Sync: fsync(2) on Linux and the BSDs, fcntl(F_FULLFSYNC) on
//     macOS (Go's File.Sync; plain fsync only reaches the drive's cache
//     there), FlushFileBuffers on Windows. SyncData is fdatasync(2) on
//     Linux and Sync elsewhere.
//   - a directory's Sync (SyncDir): fsync(2) of the directory on unix
//     (F_FULLFSYNC on macOS), FlushFileBuffers on a directory handle opened
//     with backup semantics on Windows (osfs.SyncDir). Without it a created,
//     renamed or removed name may be undone by a power cut even when the
//     file's data was synced.
package storefs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/ckpt/ckpt/internal/osfs"
)

// OS is the real file system: vfs.Default, with directory syncs that are
// real on Windows too (pebble's skip them there).
var OS vfs.FS = osFS{vfs.Default}

// Or returns fsys, or OS when fsys is nil.
func Or(fsys vfs.FS) vfs.FS {
	if fsys == nil {
		return OS
	}
	return fsys
}

type osFS struct{ vfs.FS }

func (o osFS) OpenDir(name string) (vfs.File, error) {
	f, err := o.FS.OpenDir(name)
	if err != nil {
		return nil, err
	}
	return osDir{File: f, name: name}, nil
}

func (o osFS) Unwrap() vfs.FS { return o.FS }

// osDir is a directory of OS; its syncs go through osfs.SyncDir.
type osDir struct {
	vfs.File
	name string
}

func (d osDir) Sync() error     { return osfs.SyncDir(d.name) }
func (d osDir) SyncData() error { return d.Sync() }

// SyncDir makes the entries of dir (files created, renamed or removed in
// it) durable.
func SyncDir(fsys vfs.FS, dir string) error {
	d, err := fsys.OpenDir(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// MkdirAll creates dir and its missing parents with mode perm, and syncs
// the parent of each directory it creates, so that none of them is undone
// by a power cut.
func MkdirAll(fsys vfs.FS, dir string, perm os.FileMode) error {
	parent := fsys.PathDir(dir)
	if _, err := fsys.Stat(dir); err == nil || parent == dir {
		return fsys.MkdirAll(dir, perm)
	}
	if err := MkdirAll(fsys, parent, perm); err != nil {
		return err
	}
	if err := fsys.MkdirAll(dir, perm); err != nil {
		return err
	}
	return SyncDir(fsys, parent)
}

// Truncate cuts or extends f to size bytes; f must be a file of OS or of
// a file system that keeps the method (faultfs's do).
func Truncate(f vfs.File, name string, size int64) error {
	t, ok := f.(interface{ Truncate(int64) error })
	if !ok {
		return &fs.PathError{Op: "truncate", Path: name, Err: errors.ErrUnsupported}
	}
	return t.Truncate(size)
}

// ReadFile returns the contents of name.
func ReadFile(fsys vfs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// WriteFile replaces name with data durably: a temporary sibling
// (name+".tmp") written and synced, renamed over name, and the directory
// synced. A crash leaves the old contents or the new, never a mix.
func WriteFile(fsys vfs.FS, name string, data []byte) (err error) {
	tmp := name + ".tmp"
	f, err := fsys.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fsys.Rename(tmp, name)
	}
	if err != nil {
		_ = fsys.Remove(tmp)
		return err
	}
	if err := SyncDir(fsys, fsys.PathDir(name)); err != nil {
		return fmt.Errorf("sync %s: %w", fsys.PathDir(name), err)
	}
	return nil
}

// Remove removes name durably (the directory synced); a missing name is
// no error.
func Remove(fsys vfs.FS, name string) error {
	if err := fsys.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return SyncDir(fsys, fsys.PathDir(name))
}

// StartWriteback starts writing n bytes of f at off to the device, as
// osfs.StartWriteback does, when f is a file of the OS (a simulated file
// has nothing to write back). A hint only: durability is still f's Sync.
func StartWriteback(f vfs.File, off, n int64) {
	if fd := f.Fd(); fd != vfs.InvalidFd {
		osfs.StartWriteback(fd, off, n)
	}
}
