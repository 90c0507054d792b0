//go:build windows

package osfs

import (
	"io"
	"os"

	"golang.org/x/sys/windows"
)

// regular opens the file itself, never the target of a reparse point
// (FILE_FLAG_OPEN_REPARSE_POINT), and shares it for reading, writing and
// deletion so that a save never stands in an editor's way.
type regular struct {
	f      *os.File
	path   string
	opened Stamp
	err    error
}

func openRegular(path string) (regular, error) {
	p, err := windows.UTF16PtrFromString(longPath(path))
	if err != nil {
		return regular{}, &os.PathError{Op: "open", Path: path, Err: err}
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil,
		windows.OPEN_EXISTING, windows.FILE_FLAG_OPEN_REPARSE_POINT|windows.FILE_FLAG_SEQUENTIAL_SCAN, 0)
	if err != nil {
		return regular{}, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		windows.CloseHandle(h)
		return regular{}, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if info.FileAttributes&(windows.FILE_ATTRIBUTE_DIRECTORY|windows.FILE_ATTRIBUTE_REPARSE_POINT|windows.FILE_ATTRIBUTE_DEVICE) != 0 {
		windows.CloseHandle(h)
		return regular{}, &os.PathError{Op: "open", Path: path, Err: ErrNotRegular}
	}
	return regular{f: os.NewFile(uintptr(h), path), path: path, opened: stampOf(&info)}, nil
}

// Stamp returns the open file's current size and last-write time.
func (r *regular) Stamp() (Stamp, error) {
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(r.f.Fd()), &info); err != nil {
		return Stamp{}, &os.PathError{Op: "stat", Path: r.path, Err: err}
	}
	return stampOf(&info), nil
}

func stampOf(info *windows.ByHandleFileInformation) Stamp {
	size := int64(info.FileSizeHigh)<<32 | int64(info.FileSizeLow)
	return Stamp{Size: size, ModTime: info.LastWriteTime.Nanoseconds()}
}

func (r *regular) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

// Err is the file's read error, nil when every read succeeded.
func (r *regular) Err() error { return r.err }

// Close releases the handle.
func (r *regular) Close() error { return r.f.Close() }
