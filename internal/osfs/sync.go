package osfs

import (
	"errors"
	"os"
)

// ErrNoFilesystemSync is returned by SyncFilesystem where the system cannot
// flush a whole filesystem at once; callers then sync each file they wrote.
var ErrNoFilesystemSync = errors.New("osfs: no filesystem-wide sync on this platform")

// DataSync makes f's data durable: when it returns nil, the bytes written
// so far survive a power loss. Linux: fdatasync(2); macOS: F_FULLFSYNC
// (plain fsync only reaches the drive's cache there), falling back to fsync
// where the filesystem refuses it; Windows: FlushFileBuffers.
func DataSync(f *os.File) error { return dataSync(f) }

// SyncDir makes the entries of dir (creations, renames, removals) durable.
// Unix: fsync of the directory. Windows: FlushFileBuffers on a directory
// handle opened for writing with backup semantics.
func SyncDir(dir string) error { return syncDir(dir) }

// SyncFilesystem flushes every dirty file of the filesystem holding dir.
// Linux: syncfs(2); elsewhere ErrNoFilesystemSync.
func SyncFilesystem(dir string) error { return syncFilesystem(dir) }

// DirtyBytes is how many bytes of file data the whole system holds
// written but not yet on disk (dirty or under writeback): a bound on what
// SyncFilesystem would flush besides the caller's own writes. Linux: Dirty
// plus Writeback of /proc/meminfo; ok is false where it cannot be read.
func DirtyBytes() (n int64, ok bool) { return dirtyBytes() }

// HasFilesystemSync reports whether SyncFilesystem works on this platform;
// where it does not, a caller syncs each file and directory it wrote.
func HasFilesystemSync() bool { return hasFilesystemSync }
