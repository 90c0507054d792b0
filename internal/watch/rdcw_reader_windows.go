package watch

import (
	"errors"
	"iter"
	"unsafe"

	"golang.org/x/sys/windows"
)

// dirReader is the root's directory handle and its one overlapped read.
// Only the I/O thread uses it.
type dirReader struct {
	h       windows.Handle // 0 when closed
	id      fileID         // the directory h was opened on
	ov      windows.Overlapped
	buf     []byte
	reading bool // a read is pending on h
}

// fileID identifies a file on its volume.
type fileID struct {
	volume      uint32
	high, index uint32
}

// readResult is the outcome of one read.
type readResult struct {
	data     []byte // FILE_NOTIFY_INFORMATION records
	overflow bool   // the handle's buffer overflowed: changes were lost
	err      error
}

func (d *dirReader) valid() bool { return d.h != 0 }

// open opens dir for overlapped change reads, sharing it fully so that
// the watch never keeps anyone from renaming or deleting it.
func (d *dirReader) open(dir string) error {
	h, err := openDir(dir, windows.FILE_LIST_DIRECTORY, windows.FILE_FLAG_OVERLAPPED)
	if err != nil {
		return err
	}
	id, err := idOf(h)
	if err != nil {
		windows.CloseHandle(h)
		return err
	}
	if d.ov.HEvent == 0 {
		ev, err := windows.CreateEvent(nil, 1, 0, nil)
		if err != nil {
			windows.CloseHandle(h)
			return err
		}
		d.ov.HEvent = ev
		d.buf = make([]byte, notifyBufSize)
	}
	d.h, d.id = h, id
	return nil
}

func openDir(dir string, access, flags uint32) (windows.Handle, error) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return 0, err
	}
	return windows.CreateFile(p, access, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS|flags, 0)
}

func idOf(h windows.Handle) (fileID, error) {
	var fi windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &fi); err != nil {
		return fileID{}, err
	}
	return fileID{fi.VolumeSerialNumber, fi.FileIndexHigh, fi.FileIndexLow}, nil
}

// sameAs reports whether the directory at path dir is still the one the
// handle was opened on (not deleted, moved away or replaced).
func (d *dirReader) sameAs(dir string) bool {
	h, err := openDir(dir, windows.FILE_READ_ATTRIBUTES, 0)
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	id, err := idOf(h)
	return err == nil && id == d.id
}

// issue starts a read of changes in the whole subtree.
func (d *dirReader) issue() error {
	windows.ResetEvent(d.ov.HEvent)
	err := windows.ReadDirectoryChanges(d.h, &d.buf[0], uint32(len(d.buf)), true, notifyFilter, nil, &d.ov, 0)
	if err != nil && !errors.Is(err, windows.ERROR_IO_PENDING) {
		return err
	}
	d.reading = true
	return nil
}

// finish waits for the pending read (when wait is set) and returns its
// outcome; the data stays valid until the next issue.
func (d *dirReader) finish(wait bool) readResult {
	var n uint32
	err := windows.GetOverlappedResult(d.h, &d.ov, &n, wait)
	d.reading = false
	switch {
	case errors.Is(err, windows.ERROR_NOTIFY_ENUM_DIR):
		return readResult{overflow: true}
	case err != nil:
		return readResult{err: err}
	case n == 0:
		// The documented sign that the buffer overflowed and its
		// contents were discarded.
		return readResult{overflow: true}
	}
	return readResult{data: d.buf[:n]}
}

// release closes the handle and the read's event.
func (d *dirReader) release() {
	d.close()
	if d.ov.HEvent != 0 {
		windows.CloseHandle(d.ov.HEvent)
		d.ov.HEvent = 0
	}
}

// close cancels a pending read, waits for it, and closes the handle. The
// event is kept for the next open.
func (d *dirReader) close() {
	if d.h == 0 {
		return
	}
	if d.reading {
		windows.CancelIoEx(d.h, &d.ov)
		d.finish(true)
	}
	windows.CloseHandle(d.h)
	d.h = 0
}

// records yields the action and root-relative name (backslash-separated)
// of each FILE_NOTIFY_INFORMATION record in data.
func records(data []byte) iter.Seq2[uint32, string] {
	return func(yield func(uint32, string) bool) {
		const head = int(unsafe.Offsetof(windows.FileNotifyInformation{}.FileName))
		for off := 0; off+head <= len(data); {
			fi := (*windows.FileNotifyInformation)(unsafe.Pointer(&data[off]))
			n := int(fi.FileNameLength / 2)
			if off+head+2*n > len(data) {
				return
			}
			name := windows.UTF16ToString(unsafe.Slice(&fi.FileName, n))
			if !yield(fi.Action, name) || fi.NextEntryOffset == 0 {
				return
			}
			off += int(fi.NextEntryOffset)
		}
	}
}
