package objects

// DecodeRecord verifies and decodes rec, the bytes of one whole record
// obtained outside the store's packs (a copy of a pack range kept
// elsewhere, such as on a remote), exactly as reading it at loc would:
// loc gives the record's flags, length, size and group member; its Pack
// and Offset only name the place in errors. It returns the raw content of
// a plain blob or group member (hash checked against want when want is not
// zero, and against the record's own id always), or the encoded chunk list
// of a FlagChunked record (see ChunkIDs). Damage is a *CorruptError with
// Reason set and Pack left empty; DecodeRecord never returns unverified
// bytes.
func (s *Store) DecodeRecord(rec []byte, loc Locator, want ID) ([]byte, error) {
	corrupt := func(reason string) error {
		return &CorruptError{Offset: loc.Offset, ID: want, Reason: reason}
	}
	if loc.Length < recordHeaderLen || int64(len(rec)) != int64(loc.Length) {
		return nil, corrupt("record length does not match its locator")
	}
	// A copy: a group's decoded payload is cached keyed by its stored bytes.
	buf := append([]byte(nil), rec...)
	_, data, err := s.decodeRecord(loc, want, corrupt, func() (recordHeader, []byte, error) {
		return checkFraming(buf, loc, packVersion, corrupt)
	})
	return data, err
}

// ChunkIDs decodes the chunk list of a FlagChunked record whose content is
// size bytes long (what ReadRecord or DecodeRecord returns for it): the
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
// payload: it is verified exactly as DecodeRecord verifies it, then
// appended, and its Placement (want at the new place, with loc's flags,
// size and member) is returned by the next Sync like any other. A chunked
// record's chunks are records of their own, stored by their own PutRecord.
// A group record is appended once per Batch, however many of its members
// are put: the others are placed in that one copy. A blob already
// committed is not written again.
func (b *Batch) PutRecord(rec []byte, loc Locator, want ID) error {
	if _, err := b.s.DecodeRecord(rec, loc, want); err != nil {
		return err
	}
	if found, err := b.committed(want); err != nil || found {
		return err
	}
	h, err := parseRecordHeader(rec)
	if err != nil {
		return &CorruptError{ID: want, Reason: err.Error()}
	}
	if loc.Flags&FlagGroup == 0 {
		at, err := b.appendRecord(h, rec)
		if err == nil {
			b.place(want, at, loc)
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
	b.place(want, at, loc)
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
	off, err := w.append(h, rec[recordHeaderLen:])
	return Locator{Pack: w.n, Offset: off}, err
}

// place records that want now lives in the record at at, described by loc.
func (b *Batch) place(want ID, at, loc Locator) {
	placed := Locator{Pack: at.Pack, Offset: at.Offset, Length: loc.Length, Flags: loc.Flags, Size: loc.Size, Member: loc.Member}
	b.mu.Lock()
	b.mu.placed = append(b.mu.placed, Placement{ID: want, Loc: placed})
	b.mu.Unlock()
}
