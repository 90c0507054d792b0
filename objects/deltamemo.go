package objects

import (
	"errors"
	"io"
)

// Prepared delta records: a resident host hears that a file was written
// before it asks for the save that captures it, and the save would spend
// most of its time storing each such file as a delta against its previous
// version (decoding the base, encoding the frame). PrepareVersion does that
// work ahead and keeps the record's payload in memory; the Batch that
// stores the same content against the same base record takes it instead
// of encoding again.
//
// A prepared record is keyed by what decides its bytes: the content's id,
// the base's id and the base's locator (its depth is part of the payload,
// and a locator names one record for good: packs are never renumbered).
// Content that changed after it was prepared has another id, so a stale
// record is never taken; it is dropped when the memo is full.

// deltaMemoEntries and deltaMemoBytes bound the records kept prepared.
const (
	deltaMemoEntries = 1024
	deltaMemoBytes   = 8 << 20
)

type deltaKey struct {
	id, prev ID
	base     Locator
}

// PrepareVersion encodes ahead the delta record that a Batch storing the
// content of r as a new version of blob prev (PutVersion) would write,
// and keeps it in memory for that Batch, which then writes it without
// reading prev or encoding. It reports whether it prepared one: not for
// content a delta never takes (under deltaMin bytes, or a megabyte and
// more), content already stored, or a prev that is no delta base. It
// changes nothing in the store; a record no Batch takes is dropped once
// newer ones fill the memory kept for them (deltaMemoBytes). A base that
// does not verify is no error: what is prepared then is the decision the
// Batch would take, to store the content whole. The error is r's, or a
// failure to read the index or the base's pack.
func (s *Store) PrepareVersion(r io.Reader, prev ID) (bool, error) {
	buf := getBuf(&s.midBufs, min(midBufLen, int(s.opts.ChunkThreshold)+1))
	defer s.midBufs.Put(buf)
	n, err := io.ReadFull(r, (*buf)[:min(len(*buf), deltaMax+1)])
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
	case err != nil:
		return false, err
	default:
		return false, nil // longer than a delta takes
	}
	content := (*buf)[:n]
	if len(content) < deltaMin {
		return false, nil
	}
	id := Sum(content)
	if id == prev {
		return false, nil
	}
	if _, stored, err := s.idx.Locator(id); stored || err != nil {
		return false, err
	}
	loc, ok, err := s.deltaBase(prev)
	if !ok || err != nil {
		return false, err
	}
	key := deltaKey{id, prev, loc}
	if s.deltas.has(key) {
		return true, nil
	}
	payload, pays, err := s.encodeDelta(nil, id, content, prev, loc)
	if err != nil {
		return false, err
	}
	if !pays {
		payload = nil
	}
	s.deltas.put(key, payload)
	return true, nil
}
