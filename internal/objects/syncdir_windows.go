package objects

import (
	"fmt"

	"golang.org/x/sys/windows"
)

// syncDir flushes a directory so that new entries in it are durable. On
// Windows that takes FlushFileBuffers on a handle opened for writing (with
// backup semantics, the only way to open a directory): the read-only
// handle os.Open returns is refused with "Access denied".
func syncDir(dir string) error {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return fmt.Errorf("objects: fsync %s: %w", dir, err)
	}
	h, err := windows.CreateFile(p, windows.GENERIC_WRITE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return fmt.Errorf("objects: fsync %s: %w", dir, err)
	}
	defer windows.CloseHandle(h)
	if err := windows.FlushFileBuffers(h); err != nil {
		return fmt.Errorf("objects: fsync %s: %w", dir, err)
	}
	return nil
}
