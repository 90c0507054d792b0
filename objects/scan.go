package objects

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// ScanPack calls fn for every well-formed record of pack n, in pack order,
// with the record's id and locator (for a group record, the group's id and
// a locator whose Size is the decoded group's length, Member 0). It checks the framing only (magic,
// header check, lengths); payloads are not decoded: ReadRecord verifies
// one. A torn tail (a record cut short by a crash, or zero bytes after the
// last record) ends the scan without error; garbage followed by more data
// is a *CorruptError naming the offset. A missing pack is a *CorruptError;
// an error from fn stops the scan and is returned as is.
func (s *Store) ScanPack(n uint32, fn func(id ID, loc Locator) error) error {
	f, err := s.opts.FS.Open(s.PackPath(n))
	if errors.Is(err, fs.ErrNotExist) {
		return &CorruptError{Pack: s.PackPath(n), Reason: "pack file missing"}
	}
	if err != nil {
		return fmt.Errorf("scan pack: %w", err)
	}
	defer f.Close()
	_, err = scanRecords(f, s.PackPath(n), func(h recordHeader, off int64) error {
		return fn(h.id, Locator{Pack: n, Offset: off, Length: uint32(h.recordLen()), Flags: h.flags, Size: h.size})
	})
	return err
}

// scanRecords walks the records of an open pack file and returns the clean
// end: the offset just past the last well-formed record (0 when even the
// pack header is torn). See ScanPack for what counts as torn.
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
	buf := make([]byte, recordHeaderLen)
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
	for size-off >= recordHeaderLen {
		if _, err := io.ReadFull(br, buf); err != nil {
			return off, fmt.Errorf("scan pack: %w", err)
		}
		h, perr := parseRecordHeader(buf)
		if perr == nil && h.flags&FlagGroup != 0 && version == packVersion1 {
			perr = fmt.Errorf("group record in a version-%d pack", version)
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
