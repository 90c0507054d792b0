package faultfs

import (
	"io"
	"io/fs"
	"maps"
	"slices"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// memFile is an open file or directory of a MemFS. Every access takes the
// MemFS's one lock.
type memFile struct {
	fs          *MemFS
	n           *memNode
	name        string
	pos         int64
	read, write bool
}

func (f *memFile) Close() error { return nil }

func (f *memFile) Read(p []byte) (int, error) {
	n, err := f.ReadAt(p, f.pos)
	f.pos += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.n.dir {
		return 0, &fs.PathError{Op: "read", Path: f.name, Err: fs.ErrInvalid}
	}
	if off >= int64(len(f.n.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.n.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) Write(p []byte) (int, error) {
	n, err := f.WriteAt(p, f.pos)
	f.pos += int64(n)
	return n, err
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if !f.write || f.n.dir {
		return 0, &fs.PathError{Op: "write", Path: f.name, Err: fs.ErrPermission}
	}
	if end := off + int64(len(p)); end > int64(len(f.n.data)) {
		f.n.data = append(f.n.data, make([]byte, end-int64(len(f.n.data)))...)
	}
	copy(f.n.data[off:], p)
	f.n.mod = time.Now()
	return len(p), nil
}

// Truncate cuts or extends the file to size bytes (not durable until Sync).
func (f *memFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if !f.write || f.n.dir {
		return &fs.PathError{Op: "truncate", Path: f.name, Err: fs.ErrPermission}
	}
	if size <= int64(len(f.n.data)) {
		f.n.data = slices.Clip(f.n.data[:size])
	} else {
		f.n.data = append(f.n.data, make([]byte, size-int64(len(f.n.data)))...)
	}
	f.n.mod = time.Now()
	return nil
}

// Sync makes a file's data, or a directory's entries, durable.
func (f *memFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.n.dir {
		f.n.syncedChildren = maps.Clone(f.n.children)
	} else {
		f.n.synced = slices.Clone(f.n.data)
	}
	return nil
}

func (f *memFile) SyncData() error { return f.Sync() }

// SyncTo promises nothing (fullSync false), as pebble's MemFS: a caller
// that relied on it for durability would be caught.
func (f *memFile) SyncTo(int64) (bool, error) { return false, nil }

func (f *memFile) Stat() (vfs.FileInfo, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	return f.n.info(f.fs.PathBase(f.name)), nil
}

func (f *memFile) Preallocate(int64, int64) error { return nil }
func (f *memFile) Prefetch(int64, int64) error    { return nil }
func (f *memFile) Fd() uintptr                    { return vfs.InvalidFd }
