package objects

import (
	"errors"
	"io/fs"
)

// CheckPackHeader reads the header of pack n and returns a *CorruptError
// when the pack is missing or does not start with the header of a
// version this package reads; other errors are I/O failures. It reads
// only the header, so a quick check can trust no locator into a pack
// whose header is damaged without reading the records.
func (s *Store) CheckPackHeader(n uint32) error {
	f, err := s.opts.FS.Open(s.PackPath(n))
	if errors.Is(err, fs.ErrNotExist) {
		return &CorruptError{Pack: s.PackPath(n), Reason: "pack file missing"}
	}
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = readPackVersion(f, s.PackPath(n))
	return err
}
