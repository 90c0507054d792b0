package objects

import (
	"io"
	"io/fs"
	"os"

	"github.com/ckpt/ckpt/internal/osfs"
)

// packFS is the file system under every pack write: creating, appending,
// syncing, truncating and removing pack files and syncing the packs
// directory. Reads of committed records go straight to os; only the paths
// that change the store go through here, so tests can fail each of them.
// Implementations return *fs.PathError-style errors wrapping the cause.
type packFS interface {
	// MkdirAll creates dir and its parents with mode perm.
	MkdirAll(dir string, perm fs.FileMode) error
	// Create creates path exclusively (O_EXCL), open for reading and writing.
	Create(path string, perm fs.FileMode) (packFile, error)
	// OpenRW opens an existing path for reading and writing.
	OpenRW(path string) (packFile, error)
	// Remove deletes path.
	Remove(path string) error
	// SyncDir fsyncs directory dir, making entries created or removed in it durable.
	SyncDir(dir string) error
}

// packFile is a pack file open for appending.
type packFile interface {
	io.Writer
	io.ReaderAt
	io.Seeker
	io.Closer
	Stat() (fs.FileInfo, error)
	Truncate(size int64) error
	Sync() error
}

// osFS is the packFS of the real file system.
type osFS struct{}

func (osFS) MkdirAll(dir string, perm fs.FileMode) error { return os.MkdirAll(dir, perm) }

func (osFS) Create(path string, perm fs.FileMode) (packFile, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
}

func (osFS) OpenRW(path string) (packFile, error) { return os.OpenFile(path, os.O_RDWR, 0) }

func (osFS) Remove(path string) error { return os.Remove(path) }

func (osFS) SyncDir(dir string) error { return osfs.SyncDir(dir) }
