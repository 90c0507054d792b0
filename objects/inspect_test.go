package objects

import (
	"errors"
	"fmt"
	"io/fs"
)

// The store's readers of single records and whole packs that only the
// tests need: they check the pack framing and a record's payload directly.

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

// ReadRecord returns the verified payload of the record at loc: the raw
// content of a plain blob (hash checked against the record's id), or the
// encoded chunk list of a chunk-list record (structure and sizes checked;
// the chunks are verified when read). Damage is a *CorruptError.
func (s *Store) ReadRecord(loc Locator) ([]byte, error) {
	_, data, err := s.readRecord(loc, ID{})
	return data, err
}
