//go:build windows

package osfs

import (
	"os"

	"golang.org/x/sys/windows"
)

// dataSync: File.Sync is FlushFileBuffers on Windows.
func dataSync(f *os.File) error { return f.Sync() }

// syncDir flushes a directory through a handle opened for writing with
// backup semantics, the only way to open a directory for FlushFileBuffers
// (the read-only handle os.Open returns is refused with "Access denied").
// The open is retried while it meets a sharing violation: a rename into the
// same directory on another thread holds the directory for a moment.
func syncDir(dir string) error {
	p, err := windows.UTF16PtrFromString(longPath(dir))
	if err != nil {
		return &os.PathError{Op: "sync", Path: dir, Err: err}
	}
	var h windows.Handle
	err = RetrySharing(func() (err error) {
		h, err = windows.CreateFile(p, windows.GENERIC_WRITE,
			windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
			nil, windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
		return err
	})
	if err != nil {
		return &os.PathError{Op: "sync", Path: dir, Err: err}
	}
	defer windows.CloseHandle(h)
	if err := windows.FlushFileBuffers(h); err != nil {
		return &os.PathError{Op: "sync", Path: dir, Err: err}
	}
	return nil
}

func syncFilesystem(*os.File) error { return ErrNoFilesystemSync }

func soundFilesystemSync(*os.File, string) bool { return false }

func dirtyBytes() (int64, bool) { return 0, false }

const hasFilesystemSync = false
