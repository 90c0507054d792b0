package walker

import (
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode/utf16"
	"unsafe"

	"golang.org/x/sys/windows"
)

// dirFD is an open directory: a handle, so that subdirectories are opened
// relative to it (NtCreateFile with a root directory, as os.Root does) and
// a directory swapped for a symlink or junction mid-walk is never followed.
// The path is kept for the calls that have no handle-relative form
// (reading a symlink's target and a pattern file).
type dirFD = *winDir

type winDir struct {
	h    windows.Handle
	path string // absolute, in Windows syntax
	vol  uint64 // volume serial number, Entry.Dev of its entries
}

// errReparse is returned when a directory to be opened turned out to be a
// symlink or junction: it is reported as vanished, never followed.
var errReparse = errors.New("directory is a symlink or junction")

const dirAccess = windows.FILE_LIST_DIRECTORY | windows.FILE_READ_ATTRIBUTES | windows.SYNCHRONIZE

const shareAll = windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE

// openRoot opens the workspace directory (already symlink-free).
func openRoot(path string) (dirFD, fileStat, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, fileStat{}, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	h, err := windows.CreateFile(p, dirAccess, shareAll, nil, windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return nil, fileStat{}, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var fi windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &fi); err != nil {
		windows.CloseHandle(h)
		return nil, fileStat{}, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if fi.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY == 0 {
		windows.CloseHandle(h)
		return nil, fileStat{}, &fs.PathError{Op: "open", Path: path, Err: windows.ERROR_DIRECTORY}
	}
	d := &winDir{h: h, path: path, vol: uint64(fi.VolumeSerialNumber)}
	return d, fileStat{typ: typeDir, mode: modeOf(fi.FileAttributes)}, nil
}

// openSub opens the subdirectory name of parent relative to its handle,
// without following a reparse point.
func openSub(parent dirFD, name string) (dirFD, error) {
	h, err := openRelative(parent, name, dirAccess, windows.FILE_DIRECTORY_FILE)
	if err != nil {
		return nil, err
	}
	var fi windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &fi); err != nil {
		windows.CloseHandle(h)
		return nil, err
	}
	if fi.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
		windows.CloseHandle(h)
		return nil, errReparse
	}
	return &winDir{h: h, path: filepath.Join(parent.path, name), vol: parent.vol}, nil
}

// openRelative opens name of parent relative to its handle, without
// following a reparse point, with access and the NtCreateFile options
// given besides synchronous I/O and backup intent. An NTSTATUS failure is
// returned as its Win32 errno, which errors.Is knows.
func openRelative(parent dirFD, name string, access, options uint32) (windows.Handle, error) {
	uname, err := windows.NewNTUnicodeString(name)
	if err != nil {
		return 0, err
	}
	oa := windows.OBJECT_ATTRIBUTES{RootDirectory: parent.h, ObjectName: uname}
	oa.Length = uint32(unsafe.Sizeof(oa))
	var h windows.Handle
	var iosb windows.IO_STATUS_BLOCK
	err = windows.NtCreateFile(&h, access, &oa, &iosb, nil, 0, shareAll, windows.FILE_OPEN,
		options|windows.FILE_SYNCHRONOUS_IO_NONALERT|windows.FILE_OPEN_FOR_BACKUP_INTENT|windows.FILE_OPEN_REPARSE_POINT, 0, 0)
	if st, ok := err.(windows.NTStatus); ok {
		return 0, st.Errno()
	}
	return h, err
}

func closeDir(d dirFD) { windows.CloseHandle(d.h) }

var dirInfoBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// readDir lists d with GetFileInformationByHandleEx(FileIdBothDirectoryInfo):
// each record carries the sizes, times, attributes and file ID, so no entry
// needs a stat of its own. It returns the names sorted by bytes and their
// stat data, index-aligned.
func readDir(d dirFD) ([]string, []fileStat, error) {
	bp := dirInfoBufs.Get().(*[]byte)
	defer dirInfoBufs.Put(bp)
	buf := *bp
	var ents []dirent
	for {
		err := windows.GetFileInformationByHandleEx(d.h, windows.FileIdBothDirectoryInfo, &buf[0], uint32(len(buf)))
		if errors.Is(err, windows.ERROR_NO_MORE_FILES) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		ents = parseDirInfo(buf, d.vol, ents)
	}
	slices.SortFunc(ents, func(a, b dirent) int { return strings.Compare(a.name, b.name) })
	names, stats := make([]string, len(ents)), make([]fileStat, len(ents))
	for i, e := range ents {
		names[i], stats[i] = e.name, e.st
	}
	return names, stats, nil
}

// dirent is one listed name with its stat data.
type dirent struct {
	name string
	st   fileStat
}

// FILE_ID_BOTH_DIR_INFO field offsets (64-bit layout, fixed by the ABI).
const (
	offFileIndex  = 4
	offWriteTime  = 24
	offChangeTime = 32
	offEndOfFile  = 40
	offAttributes = 56
	offNameLength = 60
	offEaSize     = 64 // holds the reparse tag for reparse points
	offFileID     = 96
	offFileName   = 104
)

// parseDirInfo appends the entries of one buffer of FILE_ID_BOTH_DIR_INFO
// records, without "." and "..".
func parseDirInfo(buf []byte, vol uint64, ents []dirent) []dirent {
	le := binary.LittleEndian
	for off := 0; ; {
		rec := buf[off:]
		n := int(le.Uint32(rec[offNameLength:]))
		u := make([]uint16, n/2)
		for i := range u {
			u[i] = le.Uint16(rec[offFileName+2*i:])
		}
		name := string(utf16.Decode(u))
		if name != "." && name != ".." {
			attrs := le.Uint32(rec[offAttributes:])
			ents = append(ents, dirent{name: name, st: fileStat{
				typ:     typeOfAttrs(attrs, le.Uint32(rec[offEaSize:])),
				mode:    modeOf(attrs),
				size:    int64(le.Uint64(rec[offEndOfFile:])),
				mtimeNs: filetimeNs(int64(le.Uint64(rec[offWriteTime:]))),
				ctimeNs: filetimeNs(int64(le.Uint64(rec[offChangeTime:]))),
				ino:     le.Uint64(rec[offFileID:]),
				dev:     vol,
			}})
		}
		next := int(le.Uint32(rec))
		if next == 0 {
			return ents
		}
		off += next
	}
}

// typeOfAttrs classifies an entry: a name-surrogate reparse point
// (symlink, junction) is a symlink, never followed; other reparse points
// (cloud placeholders, deduplicated files) are what their attributes say.
func typeOfAttrs(attrs, tag uint32) fileType {
	const nameSurrogate = 0x20000000
	switch {
	case attrs&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 && tag&nameSurrogate != 0:
		return typeSymlink
	case attrs&windows.FILE_ATTRIBUTE_DIRECTORY != 0:
		return typeDir
	case attrs&windows.FILE_ATTRIBUTE_DEVICE != 0:
		return typeDevice
	}
	return typeFile
}

// modeOf synthesises permission bits: Windows has no exec bit, and the
// read-only attribute removes the write bits of a file.
func modeOf(attrs uint32) uint32 {
	switch {
	case attrs&windows.FILE_ATTRIBUTE_DIRECTORY != 0:
		return 0o755
	case attrs&windows.FILE_ATTRIBUTE_READONLY != 0:
		return 0o444
	}
	return 0o644
}

// filetimeNs converts 100 ns intervals since 1601 to ns since 1970.
func filetimeNs(ft int64) int64 {
	const epochDelta = 116444736000000000
	if ft == 0 {
		return 0
	}
	return (ft - epochDelta) * 100
}

// fileBasicInfo is FILE_BASIC_INFO.
type fileBasicInfo struct {
	CreationTime, LastAccessTime, LastWriteTime, ChangeTime int64
	FileAttributes                                          uint32
	_                                                       uint32
}

// fileAttributeTagInfo is FILE_ATTRIBUTE_TAG_INFO.
type fileAttributeTagInfo struct{ FileAttributes, ReparseTag uint32 }

// lstatAt returns the stat data of name in d as a listing of d reports it
// (see parseDirInfo), opening the entry relative to d's handle without
// following a reparse point. A listing needs none: readDir returns every
// entry statted; a replayed directory's entries are read one by one.
func lstatAt(d dirFD, name string) (fileStat, error) {
	h, err := openRelative(d, name, windows.FILE_READ_ATTRIBUTES|windows.SYNCHRONIZE, 0)
	if err != nil {
		return fileStat{}, &fs.PathError{Op: "lstat", Path: filepath.Join(d.path, name), Err: err}
	}
	defer windows.CloseHandle(h)
	var fi windows.ByHandleFileInformation
	var basic fileBasicInfo
	var tag fileAttributeTagInfo
	err = windows.GetFileInformationByHandle(h, &fi)
	if err == nil {
		err = windows.GetFileInformationByHandleEx(h, windows.FileBasicInfo, (*byte)(unsafe.Pointer(&basic)), uint32(unsafe.Sizeof(basic)))
	}
	if err == nil && fi.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
		err = windows.GetFileInformationByHandleEx(h, windows.FileAttributeTagInfo, (*byte)(unsafe.Pointer(&tag)), uint32(unsafe.Sizeof(tag)))
	}
	if err != nil {
		return fileStat{}, &fs.PathError{Op: "lstat", Path: filepath.Join(d.path, name), Err: err}
	}
	return fileStat{
		typ:     typeOfAttrs(fi.FileAttributes, tag.ReparseTag),
		mode:    modeOf(fi.FileAttributes),
		size:    int64(fi.FileSizeHigh)<<32 | int64(fi.FileSizeLow),
		mtimeNs: filetimeNs(basic.LastWriteTime),
		ctimeNs: filetimeNs(basic.ChangeTime),
		ino:     uint64(fi.FileIndexHigh)<<32 | uint64(fi.FileIndexLow),
		dev:     d.vol,
	}, nil
}

// statDir returns the identity of the directory at path (following
// symlinks), for Options.ExcludeDirs: volume serial and file index.
func statDir(path string) (devIno, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return devIno{}, err
	}
	h, err := windows.CreateFile(p, windows.FILE_READ_ATTRIBUTES, shareAll, nil, windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return devIno{}, err
	}
	defer windows.CloseHandle(h)
	var fi windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &fi); err != nil {
		return devIno{}, err
	}
	return devIno{uint64(fi.VolumeSerialNumber), uint64(fi.FileIndexHigh)<<32 | uint64(fi.FileIndexLow)}, nil
}

// readlinkAt returns the target of the symlink or junction name in d, with
// '/' separators so a checkpoint reads the same on every OS.
func readlinkAt(d dirFD, name string, _ int64) (string, error) {
	target, err := os.Readlink(filepath.Join(d.path, name))
	if err != nil {
		return "", err
	}
	return filepath.ToSlash(target), nil
}

// readPatternFile reads the pattern file name of d; a symlinked one is not
// followed (fs.ErrInvalid, as git does).
func readPatternFile(d dirFD, name string) ([]byte, error) {
	return readPatternPath(filepath.Join(d.path, name))
}

// readPatternPath reads the regular file at path, at most maxPatternFile
// bytes; anything else is fs.ErrInvalid.
func readPatternPath(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxPatternFile {
		return nil, fs.ErrInvalid
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxPatternFile))
}

// isNotDir reports an error saying a path is not a directory.
func isNotDir(err error) bool {
	return errors.Is(err, windows.ERROR_DIRECTORY) || errors.Is(err, windows.ERROR_PATH_NOT_FOUND)
}

// isVanished reports an open error saying the directory was replaced by a
// file or by a symlink or junction.
func isVanished(err error) bool {
	return errors.Is(err, errReparse) || errors.Is(err, windows.ERROR_DIRECTORY)
}
