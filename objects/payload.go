package objects

import (
	"errors"
	"fmt"
	"io"

	"github.com/ckpt/ckpt/objects/internal/pack"
)

// payloadSource reads ranges of one group record's stored payload, so
// that a member read fetches the frame and block headers, the head of the
// first frame and the frame holding the member rather than the whole
// record: a group is up to a megabyte, a source file a few kilobytes.
type payloadSource interface {
	// len is the stored payload's length.
	len() int64
	// bytes returns the n stored bytes at off (within len), as a slice
	// that is never changed afterwards. The error is a reason for a
	// CorruptError unless it is a readFailure.
	bytes(off int64, n int) ([]byte, error)
}

// storedPayload is a payload read whole.
type storedPayload []byte

func (p storedPayload) len() int64 { return int64(len(p)) }

func (p storedPayload) bytes(off int64, n int) ([]byte, error) {
	return p[off : off+int64(n) : off+int64(n)], nil
}

// readFailure is an error reading a pack (or a missing pack's
// *CorruptError) that a read returns as it is, rather than as damage to
// the record it was reading.
type readFailure struct{ err error }

func (e *readFailure) Error() string { return e.err.Error() }
func (e *readFailure) Unwrap() error { return e.err }

// damage returns err, met reading a record: a readFailure's error as it
// is, anything else a reason given to corrupt.
func damage(err error, corrupt func(string) error) error {
	var rf *readFailure
	if errors.As(err, &rf) {
		return rf.err
	}
	return corrupt(err.Error())
}

// headWindow is how much of a record's payload is read with its header:
// all of a small group's, else its first frame's header and first block
// header. A later read of a few header bytes fetches headerWindow bytes,
// a frame's header and its first block's at once.
const (
	headWindow   = 4 << 10
	headerWindow = 64
)

// packPayload reads the stored payload of the record at loc from its pack,
// opening the pack at its first read; close releases the pack. It is used
// by one read at a time.
type packPayload struct {
	s   *Store
	loc Locator
	ph  *packHandle
	// win holds the stored bytes from winOff fetched by the last read of
	// a few bytes; it is never written again.
	win    []byte
	winOff int64
}

// payload returns a source of the stored payload of the record at loc.
func (s *Store) payload(loc Locator) *packPayload { return &packPayload{s: s, loc: loc} }

func (p *packPayload) len() int64 { return int64(p.loc.Length) - pack.RecordHeaderLen }

func (p *packPayload) bytes(off int64, n int) ([]byte, error) {
	if p.win != nil && off >= p.winOff && off+int64(n) <= p.winOff+int64(len(p.win)) {
		at := off - p.winOff
		return p.win[at : at+int64(n) : at+int64(n)], nil
	}
	if n >= headerWindow {
		return p.read(pack.RecordHeaderLen+off, n)
	}
	win, err := p.read(pack.RecordHeaderLen+off, int(min(headerWindow, p.len()-off)))
	if err != nil {
		return nil, err
	}
	p.win, p.winOff = win, off
	return win[:n:n], nil
}

// header reads and checks the record's header against its locator and
// its pack's version, fetching the head of the payload with it.
func (p *packPayload) header(corrupt func(string) error) (recordHeader, error) {
	n := int(min(pack.RecordHeaderLen+headWindow, int64(p.loc.Length)))
	buf, err := p.read(0, n)
	if err != nil {
		return recordHeader{}, damage(err, corrupt)
	}
	h, err := parseRecordHeader(buf)
	if err != nil {
		return h, corrupt(err.Error())
	}
	if err := checkHeader(h, p.loc, p.ph.version, corrupt); err != nil {
		return h, err
	}
	p.win, p.winOff = buf[pack.RecordHeaderLen:], 0
	return h, nil
}

// read reads n bytes at offset off of the record.
func (p *packPayload) read(off int64, n int) ([]byte, error) {
	if p.ph == nil {
		ph, err := p.s.openPack(p.loc.Pack, p.loc.Offset)
		if err != nil {
			return nil, &readFailure{err}
		}
		p.ph = ph
		if err := p.s.checkExtent(ph, p.loc); err != nil {
			return nil, err
		}
	}
	buf := make([]byte, n)
	if m, err := p.ph.f.ReadAt(buf, p.loc.Offset+off); m < n {
		if err == io.EOF {
			return nil, errors.New("record extends past end of pack")
		}
		return nil, &readFailure{fmt.Errorf("read pack: %w", err)}
	}
	return buf, nil
}

// close releases the pack, if a read opened it.
func (p *packPayload) close() {
	if p.ph != nil {
		p.s.releasePack(p.ph)
		p.ph = nil
	}
}
