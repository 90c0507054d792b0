package objects

import (
	"bytes"

	"github.com/ckpt/ckpt/objects/internal/pack"
)

// DecodeRecord verifies and decodes rec, the bytes of one whole record
// obtained outside the store's packs (a copy of a pack range kept
// elsewhere, such as on a remote), for each of blobs exactly as reading it
// at that blob's locator would: the locator gives the record's flags,
// length, size and group member; its Pack and Offset only name the place
// in errors (every locator must name this one record). It returns, in the
// order of blobs, the raw content of a plain blob or group member (hash
// checked against the blob's ID when not zero, and against the record's
// own id always), or the encoded chunk list of a chunk-list record (see
// ChunkIDs). A group record is decoded and its hash checked once, however
// many of its members blobs names. The contents never share rec's memory.
// Damage is a *CorruptError with Reason set and Pack left empty;
// DecodeRecord never returns unverified bytes. A delta record is refused
// as damage: its base is not part of it, and a copy kept outside the store
// holds a delta's content whole (Store.WholeRecord).
func (s *Store) DecodeRecord(rec []byte, blobs []Placement) ([][]byte, error) {
	out := make([][]byte, len(blobs))
	_, err := s.verifyExternal(rec, blobs, func(i int, data []byte) {
		if f := blobs[i].Loc.Flags; f&pack.FlagGroup != 0 || f&pack.FlagCompressed == 0 {
			data = bytes.Clone(data) // rec's own bytes, or its decoded group's
		}
		out[i] = data
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// verifyExternal verifies rec for each of blobs, as DecodeRecord describes,
// and calls fn with each one's content in turn. For a group record it
// returns the length of the payload the contents are slices of (rec's own
// bytes when the group is stored uncompressed).
func (s *Store) verifyExternal(rec []byte, blobs []Placement, fn func(i int, data []byte)) (int, error) {
	if len(blobs) == 0 {
		return 0, nil
	}
	loc := blobs[0].Loc
	corrupt := func(b Placement) func(string) error {
		return func(reason string) error {
			return &CorruptError{Offset: b.Loc.Offset, ID: b.ID, Reason: reason}
		}
	}
	for i, b := range blobs {
		switch {
		case b.Loc.Length < pack.RecordHeaderLen || int64(len(rec)) != int64(b.Loc.Length):
			return 0, corrupt(b)("record length does not match its locator")
		case b.Loc.Pack != loc.Pack || b.Loc.Offset != loc.Offset || b.Loc.Flags != loc.Flags:
			return 0, corrupt(b)("locators of one record disagree")
		case i > 0 && loc.Flags&pack.FlagGroup == 0:
			return 0, corrupt(b)("a plain record holds one blob")
		}
	}
	if loc.Flags&pack.FlagDelta != 0 {
		// Its base is not part of it: a copy kept outside the store holds
		// the delta's content whole (Store.WholeRecord).
		return 0, corrupt(blobs[0])("a delta record does not stand alone")
	}
	if loc.Flags&pack.FlagGroup == 0 {
		b := blobs[0]
		_, data, err := s.decodeRecord(b.Loc, b.ID, 0, nil, corrupt(b), func() (recordHeader, []byte, error) {
			return checkFraming(rec, b.Loc, pack.Version, corrupt(b))
		})
		if err != nil {
			return 0, err
		}
		fn(0, data)
		return 0, nil
	}
	h, stored, err := checkFraming(rec, loc, pack.Version, corrupt(blobs[0]))
	if err != nil {
		return 0, err
	}
	p, err := s.decodeGroup(h, stored, corrupt(blobs[0]))
	if err != nil {
		return 0, err
	}
	for i, b := range blobs {
		_, content, err := memberOf(p, h.size, b.Loc, b.ID, corrupt(b))
		if err != nil {
			return 0, err
		}
		fn(i, content)
	}
	return len(p), nil
}

// ChunkIDs decodes the chunk list of a chunk-list record whose content is
// size bytes long (what DecodeRecord returns for it): the
// chunk ids in file order. A malformed list is a *CorruptError.
func ChunkIDs(list []byte, size int64) ([]ID, error) {
	chunks, err := parseChunkList(list, size)
	if err != nil {
		return nil, &CorruptError{Reason: err.Error()}
	}
	ids := make([]ID, len(chunks))
	for i, c := range chunks {
		ids[i] = c.id
	}
	return ids, nil
}

// PutRecord stores rec, one whole record obtained outside the store (see
// DecodeRecord), in a pack as it is, without decoding and re-encoding its
// payload: it is verified for each of blobs exactly as DecodeRecord
// verifies it (a group record once for all the members blobs names), then
// appended, and each blob's Placement (at the new place, with its
// locator's flags, size and member) is returned by the next Sync like any
// other. A chunked record's chunks are records of their own, stored by
// their own PutRecord. A group record is appended once per Batch, however
// many calls name its members: the others are placed in that one copy. A
// blob already committed is not written again.
func (b *Batch) PutRecord(rec []byte, blobs []Placement) error {
	if _, err := b.s.verifyExternal(rec, blobs, func(int, []byte) {}); err != nil {
		return err
	}
	return b.putVerified(rec, blobs)
}

// PutDecodedRecord is PutRecord returning, as DecodeRecord does, the
// content of each of blobs: the record is verified and decoded once for
// both. The contents never share rec's memory. The members of a
// compressed group share its decoded payload (which lives as long as any
// of them) when they hold at least half of it, where DecodeRecord copies
// each; otherwise they are copied out of it: what the contents keep alive
// is at most twice their own length.
func (b *Batch) PutDecodedRecord(rec []byte, blobs []Placement) ([][]byte, error) {
	out := make([][]byte, len(blobs))
	held := 0
	shared, err := b.s.verifyExternal(rec, blobs, func(i int, data []byte) {
		if blobs[i].Loc.Flags&pack.FlagCompressed == 0 {
			data = bytes.Clone(data) // rec's own bytes
		}
		out[i] = data
		held += len(data)
	})
	if err != nil {
		return nil, err
	}
	if len(blobs) > 0 && blobs[0].Loc.Flags&pack.FlagCompressed != 0 && shared > 2*held {
		for i := range out {
			out[i] = bytes.Clone(out[i])
		}
	}
	return out, b.putVerified(rec, blobs)
}

// putVerified is PutRecord after rec has been verified for blobs.
func (b *Batch) putVerified(rec []byte, blobs []Placement) error {
	var fresh []Placement
	for _, p := range blobs {
		found, err := b.committed(p.ID)
		if err != nil {
			return err
		}
		if !found {
			fresh = append(fresh, p)
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	h, err := parseRecordHeader(rec)
	if err != nil {
		return &CorruptError{ID: fresh[0].ID, Reason: err.Error()}
	}
	if h.flags&pack.FlagGroup == 0 {
		at, err := b.appendRecord(h, rec)
		if err == nil {
			b.place(fresh[0].ID, at, fresh[0].Loc)
		}
		return err
	}
	b.copyMu.Lock()
	defer b.copyMu.Unlock()
	at, ok := b.copied[h.id]
	if !ok {
		if at, err = b.appendRecord(h, rec); err != nil {
			return err
		}
		if b.copied == nil {
			b.copied = map[ID]Locator{}
		}
		b.copied[h.id] = at
	}
	for _, p := range fresh {
		b.place(p.ID, at, p.Loc)
	}
	return nil
}

// appendRecord appends the record rec (header h) to a pack and returns
// where it went (Pack, Offset).
func (b *Batch) appendRecord(h recordHeader, rec []byte) (Locator, error) {
	w, err := b.acquire()
	if err != nil {
		return Locator{}, err
	}
	defer b.release(w)
	off, err := w.append(h, rec[pack.RecordHeaderLen:])
	return Locator{Pack: w.n, Offset: off}, err
}

// place records that want now lives in the record at at, described by loc.
func (b *Batch) place(want ID, at, loc Locator) {
	placed := Locator{Pack: at.Pack, Offset: at.Offset, Length: loc.Length, Flags: loc.Flags, Size: loc.Size, Member: loc.Member}
	b.mu.Lock()
	b.mu.placed = append(b.mu.placed, Placement{ID: want, Loc: placed})
	b.mu.Unlock()
}
