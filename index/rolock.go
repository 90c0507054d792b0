package index

import (
	"errors"
	"io"
	"io/fs"
	"syscall"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// readOnlyFS is the file system of an index opened ReadOnly: where the
// index lies on a read-only file system (a read-only mount of a store) or
// its lock file may not be written (a store another user lets others
// read), pebble cannot take its lock, and the index is opened without it. The store's own lock (held by whoever opens the index, on
// an inode every mount of the store shares) is what keeps writers out;
// pebble's only excludes other programs that open the index itself.
type readOnlyFS struct {
	vfs.FS
}

// Lock takes pebble's lock, or gives a lock that holds nothing where it
// may not.
func (r readOnlyFS) Lock(name string) (io.Closer, error) {
	c, err := r.FS.Lock(name)
	if errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission) {
		return noLock{}, nil
	}
	return c, err
}

// noLock is the lock of an index on a read-only file system.
type noLock struct{}

func (noLock) Close() error { return nil }
