package osfs

import (
	"errors"
	"fmt"
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
func SyncFilesystem(dir string) error {
	s, err := OpenFilesystemSync(dir)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.Sync()
}

// FilesystemSync flushes the file system holding a directory (Linux:
// syncfs(2)) through a descriptor opened before the writes it is to make
// durable: Linux reports to a syncfs only the write-back errors raised
// since its descriptor was opened, so one opened afterwards could report
// success for a write that was lost.
type FilesystemSync struct {
	f   *os.File
	dir string
}

// OpenFilesystemSync opens dir for Sync; where the platform cannot flush a
// whole file system it fails with ErrNoFilesystemSync.
func OpenFilesystemSync(dir string) (*FilesystemSync, error) {
	if !hasFilesystemSync {
		return nil, ErrNoFilesystemSync
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	return &FilesystemSync{f, dir}, nil
}

// FilesystemSyncOf is OpenFilesystemSync of the directory the caller
// opened as f (at path dir), which the FilesystemSync then owns; where the
// platform cannot flush a whole file system it fails with
// ErrNoFilesystemSync and leaves f to the caller.
func FilesystemSyncOf(f *os.File, dir string) (*FilesystemSync, error) {
	if !hasFilesystemSync {
		return nil, ErrNoFilesystemSync
	}
	return &FilesystemSync{f, dir}, nil
}

// Sync flushes every dirty file of the file system and reports any
// write-back error since OpenFilesystemSync.
func (s *FilesystemSync) Sync() error {
	if err := syncFilesystem(s.f); err != nil {
		return fmt.Errorf("syncfs %s: %w", s.dir, err)
	}
	return nil
}

// Sound reports whether Sync makes every file below the directory as
// durable as the file's own fsync would, and reports every write-back
// error as that fsync would: the file system is ext4, XFS, Btrfs, F2FS or
// tmpfs (a FUSE file system, for one, is asked to sync nothing by a
// syncfs), no other file system is mounted below the directory (a syncfs
// reaches one file system), and the kernel is Linux 5.8 or later (before
// it, syncfs reported no write-back error). Where it is false a caller
// syncs each file instead.
func (s *FilesystemSync) Sound() bool { return soundFilesystemSync(s.f, s.dir) }

// Close releases the descriptor.
func (s *FilesystemSync) Close() error { return s.f.Close() }

// DirtyBytes is how many bytes of file data the whole system holds
// written but not yet on disk (dirty or under writeback): a bound on what
// SyncFilesystem would flush besides the caller's own writes. Linux: Dirty
// plus Writeback of /proc/meminfo; ok is false where it cannot be read.
func DirtyBytes() (n int64, ok bool) { return dirtyBytes() }

// HasFilesystemSync reports whether SyncFilesystem works on this platform;
// where it does not, a caller syncs each file and directory it wrote.
func HasFilesystemSync() bool { return hasFilesystemSync }
