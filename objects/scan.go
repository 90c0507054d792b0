package objects

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/ckpt/ckpt/objects/internal/pack"
)

// scanRecords walks the records of an open pack file and returns the clean
// end: the offset just past the last well-formed record (0 when even the
// pack header is torn). A torn tail (a record cut short by a crash, or
// zero bytes after the last record) ends the walk without error; garbage
// followed by more data is a *CorruptError naming the offset.
func scanRecords(f packReader, path string, fn func(h recordHeader, off int64) error) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("scan pack: %w", err)
	}
	size := fi.Size()
	corrupt := func(off int64, reason string) error {
		return &CorruptError{Pack: path, Offset: off, Reason: reason}
	}
	br := bufio.NewReaderSize(io.NewSectionReader(f, 0, size), 1<<20)
	buf := make([]byte, pack.RecordHeaderLen)
	hdr := packHeader()
	var version uint32
	if size < int64(len(hdr)) {
		got := buf[:size]
		if _, err := io.ReadFull(br, got); err != nil {
			return 0, fmt.Errorf("scan pack: %w", err)
		}
		if bytes.HasPrefix(hdr, got) || allZero(got) {
			return 0, nil
		}
		return 0, corrupt(0, "bad pack header")
	}
	if _, err := io.ReadFull(br, buf[:len(hdr)]); err != nil {
		return 0, fmt.Errorf("scan pack: %w", err)
	}
	if version = packVersionOf(buf[:len(hdr)]); version == 0 {
		if zero, err := zeroFrom(f, 0, size); err != nil || zero {
			return 0, err
		}
		return 0, corrupt(0, "bad pack header")
	}
	off := int64(len(hdr))
	for size-off >= pack.RecordHeaderLen {
		if _, err := io.ReadFull(br, buf); err != nil {
			return off, fmt.Errorf("scan pack: %w", err)
		}
		h, perr := parseRecordHeader(buf)
		if perr == nil {
			perr = recordInPack(h.flags, version)
		}
		if perr != nil {
			if zero, err := zeroFrom(f, off, size); err != nil || zero {
				return off, err
			}
			return off, corrupt(off, perr.Error())
		}
		if h.recordLen() > size-off {
			return off, nil
		}
		if err := fn(h, off); err != nil {
			return off, err
		}
		if _, err := br.Discard(int(h.payloadLen)); err != nil {
			return off, fmt.Errorf("scan pack: %w", err)
		}
		off += h.recordLen()
	}
	return off, nil
}

// packReader is what scanning needs of an open pack file.
type packReader interface {
	io.ReaderAt
	Stat() (vfs.FileInfo, error)
}

// zeroFrom reports whether bytes [off, size) of f are all zero, the shape
// of a tail that a crash extended without writing.
func zeroFrom(f io.ReaderAt, off, size int64) (bool, error) {
	buf := make([]byte, 64<<10)
	for off < size {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		if !allZero(buf[:n]) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("scan pack: %w", err)
		}
		off += int64(n)
	}
	return true, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
