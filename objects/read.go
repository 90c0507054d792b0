package objects

import (
	"bytes"
	"fmt"
	"io"

	"github.com/ckpt/ckpt/objects/internal/pack"
)

// Stat returns the committed locator of id, or an error wrapping
// ErrNotFound. It reads only the index.
func (s *Store) Stat(id ID) (Locator, error) {
	loc, found, err := s.idx.Locator(id)
	if err != nil {
		return Locator{}, fmt.Errorf("look up %s: %w", id.Short(), err)
	}
	if !found {
		return Locator{}, fmt.Errorf("%w: %s", ErrNotFound, id.Short())
	}
	return loc, nil
}

// Get returns the verified content of blob id (a large file's chunks
// joined). It fails with an error wrapping ErrNotFound when id is not
// committed, and with a *CorruptError when the data does not verify; it
// never returns wrong bytes.
func (s *Store) Get(id ID) ([]byte, error) { return s.get(id, s.Stat, s.content) }

// content reads the verified content of blob id, not chunked, at loc.
func (s *Store) content(loc Locator, id ID) ([]byte, error) {
	_, data, err := s.readRecord(loc, id)
	return data, err
}

// get is Get with stat locating id and read reading blobs that are not
// chunked.
func (s *Store) get(id ID, stat func(ID) (Locator, error), read func(Locator, ID) ([]byte, error)) ([]byte, error) {
	loc, err := stat(id)
	if err != nil {
		return nil, err
	}
	if loc.Flags&pack.FlagChunked == 0 {
		return read(loc, id)
	}
	r, err := s.openChunked(id, loc, read)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, loc.Size)
	for {
		chunk, err := r.next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, chunk...)
	}
}

// Open returns a reader of blob id's content and its length. A large file
// is read chunk by chunk, each chunk verified as it is loaded; at the end
// the whole content's hash is checked and Read returns a *CorruptError
// instead of io.EOF on mismatch. Errors are as for Get.
func (s *Store) Open(id ID) (io.ReadCloser, int64, error) { return s.open(id, s.Stat, s.content) }

// open is Open with stat locating id and read reading blobs that are not
// chunked.
func (s *Store) open(id ID, stat func(ID) (Locator, error), read func(Locator, ID) ([]byte, error)) (io.ReadCloser, int64, error) {
	loc, err := stat(id)
	if err != nil {
		return nil, 0, err
	}
	if loc.Flags&pack.FlagChunked == 0 {
		data, err := read(loc, id)
		if err != nil {
			return nil, 0, err
		}
		return io.NopCloser(bytes.NewReader(data)), loc.Size, nil
	}
	r, err := s.openChunked(id, loc, read)
	if err != nil {
		return nil, 0, err
	}
	return r, loc.Size, nil
}

// ChunkList returns the chunk ids of chunked blob id, in file order.
func (s *Store) ChunkList(id ID) ([]ID, error) {
	loc, err := s.Stat(id)
	if err != nil {
		return nil, err
	}
	if loc.Flags&pack.FlagChunked == 0 {
		return nil, fmt.Errorf("blob %s is not chunked", id.Short())
	}
	chunks, err := s.readChunkList(id, loc)
	if err != nil {
		return nil, err
	}
	ids := make([]ID, len(chunks))
	for i, c := range chunks {
		ids[i] = c.id
	}
	return ids, nil
}

// readChunkList reads and decodes the chunk list of blob id at loc.
func (s *Store) readChunkList(id ID, loc Locator) ([]chunkRef, error) {
	h, payload, err := s.readRecord(loc, id)
	if err != nil {
		return nil, err
	}
	chunks, perr := parseChunkList(payload, h.size)
	if perr != nil {
		return nil, &CorruptError{Pack: s.PackPath(loc.Pack), Offset: loc.Offset, ID: id, Reason: perr.Error()}
	}
	return chunks, nil
}

// readRecord reads, checks and decodes the record at loc (for a group
// member, the member's content and a header naming it; for a delta, the
// content decoded through its chain). When want is not zero the record
// must hold that blob.
func (s *Store) readRecord(loc Locator, want ID) (recordHeader, []byte, error) {
	return s.readVersion(loc, want, pack.MaxDeltaDepth, nil)
}

// readVersion is readRecord for a record that may be a delta of depth at
// most limit: a delta's base is read with a limit one lower, so a read
// loads at most limit+1 records. With a session, group members (a
// delta's base among them) are read through the session's groups and are
// the session's own bytes.
func (s *Store) readVersion(loc Locator, want ID, limit int, session *ReadSession) (recordHeader, []byte, error) {
	corrupt := s.recordCorrupt(loc, want)
	if session != nil && loc.Flags&pack.FlagGroup != 0 {
		return session.member(loc, want, corrupt)
	}
	return s.decodeRecord(loc, want, limit, session, corrupt, func() (recordHeader, []byte, error) { return s.loadRecord(loc, corrupt) })
}

// recordCorrupt reports damage to the record at loc read for want.
func (s *Store) recordCorrupt(loc Locator, want ID) func(string) error {
	return func(reason string) error {
		return &CorruptError{Pack: s.PackPath(loc.Pack), Offset: loc.Offset, ID: want, Reason: reason}
	}
}

// decodeRecord checks and decodes the record that load returns (its header
// and stored payload, framing checked against loc), as readVersion
// describes.
func (s *Store) decodeRecord(loc Locator, want ID, limit int, session *ReadSession, corrupt func(string) error,
	load func() (recordHeader, []byte, error)) (recordHeader, []byte, error) {
	if loc.Flags&pack.FlagGroup != 0 {
		return s.readMember(loc, want, corrupt)
	}
	h, payload, err := load()
	switch {
	case err != nil:
		return h, nil, err
	case h.size != loc.Size || h.flags&pack.FlagGroup != 0:
		return h, nil, corrupt("record does not match its locator")
	case !want.IsZero() && h.id != want:
		return h, nil, corrupt("record holds blob " + h.id.Short())
	}
	switch {
	case h.flags&pack.FlagChunked != 0:
		if _, err := parseChunkList(payload, h.size); err != nil {
			return h, nil, corrupt(err.Error())
		}
		return h, payload, nil
	case h.flags&pack.FlagCompressed != 0:
		if payload, err = s.codec.decompress(payload, h.size); err != nil {
			return h, nil, corrupt(err.Error())
		}
	case h.flags&pack.FlagDelta != 0:
		if payload, h.depth, err = s.undelta(payload, h.size, limit, session, corrupt); err != nil {
			return h, nil, err
		}
	}
	if Sum(payload) != h.id {
		return h, nil, corrupt("content does not match its id")
	}
	return h, payload, nil
}

// readMember returns member loc.Member of the group record at loc, its
// content verified against the id the group's table gives it (and want,
// when not zero). Only the record's header, its frame and block headers
// and the frames holding the table and the member are read from the pack,
// and those frames decoded only up to what is read; a reader of the group
// the store keeps (see groupCache) spares the decoding of what it holds.
func (s *Store) readMember(loc Locator, want ID, corrupt func(string) error) (recordHeader, []byte, error) {
	// A session of one read: it takes the store's reader of the group,
	// checking the frames it uses against the disk, or makes one and
	// gives it to the store (ReadSession.load).
	h, content, err := s.ReadSession().member(loc, want, corrupt)
	// A copy: the cache keeps the reader's bytes.
	return h, bytes.Clone(content), err
}

// groupHeader reads and checks the header of the group record at loc
// through src.
func groupHeader(loc Locator, src *packPayload, corrupt func(string) error) (recordHeader, error) {
	if !locatorInRange(loc) {
		return recordHeader{}, corrupt("locator out of range")
	}
	return src.header(corrupt)
}

// decodeGroup returns the whole decoded payload of the group record with
// header h and stored payload stored, checked against the group's id: for
// a record taken in whole, whose every member is used at once.
func (s *Store) decodeGroup(h recordHeader, stored []byte, corrupt func(string) error) ([]byte, error) {
	payload := stored
	switch {
	case h.size > maxGroupSize:
		return nil, corrupt(fmt.Sprintf("group size %d out of range", h.size))
	case h.flags&pack.FlagCompressed != 0:
		var err error
		if payload, err = s.codec.decompress(payload, h.size); err != nil {
			return nil, corrupt(err.Error())
		}
	}
	if Sum(payload) != h.id {
		return nil, corrupt("group does not match its id")
	}
	return payload, nil
}

// memberOf returns member loc.Member of p, a prefix of the decoded payload
// of a group of size bytes that holds the member, its content checked
// against its table id (and want, when not zero). The content is p's own
// bytes.
func memberOf(p []byte, size int64, loc Locator, want ID, corrupt func(string) error) (recordHeader, []byte, error) {
	id, start, end, err := memberSpan(p, size, loc.Member)
	switch {
	case err != nil:
		return recordHeader{}, nil, corrupt(err.Error())
	case end > int64(len(p)):
		return recordHeader{}, nil, corrupt("group member not decoded")
	}
	return checkMember(id, p[start:end], loc, want, corrupt)
}

// checkMember checks content, read as member loc.Member whose table id is
// id, against loc and its id (and want, when not zero), and returns it
// with a header naming it.
func checkMember(id ID, content []byte, loc Locator, want ID, corrupt func(string) error) (recordHeader, []byte, error) {
	switch {
	case int64(len(content)) != loc.Size:
		return recordHeader{}, nil, corrupt("group member does not match its locator")
	case !want.IsZero() && id != want:
		return recordHeader{}, nil, corrupt("group member is blob " + id.Short())
	}
	if Sum(content) != id {
		return recordHeader{}, nil, corrupt("content does not match its id")
	}
	return recordHeader{flags: loc.Flags, id: id, size: loc.Size}, content, nil
}

// loadRecord reads the record at loc and checks its framing against the
// locator (and, for a group record, the pack's version). The payload is
// returned as stored.
func (s *Store) loadRecord(loc Locator, corrupt func(string) error) (recordHeader, []byte, error) {
	var h recordHeader
	if !locatorInRange(loc) {
		return h, nil, corrupt("locator out of range")
	}
	ph, err := s.openPack(loc.Pack, loc.Offset)
	if err != nil {
		return h, nil, err
	}
	defer s.releasePack(ph)
	if err := s.checkExtent(ph, loc); err != nil {
		return h, nil, damage(err, corrupt)
	}
	buf := make([]byte, loc.Length)
	if n, err := ph.f.ReadAt(buf, loc.Offset); n < len(buf) {
		if err == io.EOF {
			return h, nil, corrupt("record extends past end of pack")
		}
		return h, nil, fmt.Errorf("read pack: %w", err)
	}
	return checkFraming(buf, loc, ph.version, corrupt)
}

// locatorInRange reports whether loc's fields are within what a record
// can be.
func locatorInRange(loc Locator) bool {
	return loc.Offset >= int64(pack.HeaderLen) && loc.Length >= pack.RecordHeaderLen &&
		loc.Length <= pack.RecordHeaderLen+pack.MaxPayload && loc.Flags&^pack.KnownFlags == 0 && loc.Size >= 0
}

// checkExtent checks that a long record (over a megabyte: a shorter one is
// read whole at once) ends within its pack, before a read allocates for
// it. The error is a reason for a CorruptError unless it is a
// readFailure.
func (s *Store) checkExtent(ph *packHandle, loc Locator) error {
	if loc.Length <= 1<<20 {
		return nil
	}
	fi, err := ph.f.Stat()
	if err != nil {
		return &readFailure{err}
	}
	if loc.Offset+int64(loc.Length) > fi.Size() {
		return fmt.Errorf("record extends past end of pack (%d bytes)", fi.Size())
	}
	return nil
}

// checkFraming parses the header of buf, one whole record read from a pack
// of the given format version, and checks it against loc. The payload is
// returned as stored.
func checkFraming(buf []byte, loc Locator, version uint32, corrupt func(string) error) (recordHeader, []byte, error) {
	h, err := parseRecordHeader(buf)
	switch {
	case err != nil:
		return h, nil, corrupt(err.Error())
	case int64(len(buf)) != h.recordLen():
		return h, nil, corrupt("record does not match its locator")
	}
	if err := checkHeader(h, loc, version, corrupt); err != nil {
		return h, nil, err
	}
	return h, buf[pack.RecordHeaderLen:], nil
}

// checkHeader checks a record's parsed header against loc and against
// the format version of the pack it was read from.
func checkHeader(h recordHeader, loc Locator, version uint32, corrupt func(string) error) error {
	if h.recordLen() != int64(loc.Length) || h.flags != loc.Flags {
		return corrupt("record does not match its locator")
	}
	if err := recordInPack(h.flags, version); err != nil {
		return corrupt(err.Error())
	}
	return nil
}
