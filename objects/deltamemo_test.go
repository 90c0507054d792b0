package objects

import (
	"bytes"
	"testing"
)

// recordOf returns the header and payload of blob id's record at loc.
func recordOf(t *testing.T, s *Store, id ID, loc Locator) (recordHeader, []byte) {
	t.Helper()
	h, payload, err := s.loadRecord(loc, s.recordCorrupt(loc, id))
	if err != nil {
		t.Fatal(err)
	}
	return h, payload
}

// A delta record prepared ahead (PrepareVersion) is the one a Batch writes
// for that content against that base, byte for byte what it would have
// encoded itself, and taken once; a record prepared for other content is
// left alone.
func TestPreparedDeltaIsWrittenAsPrepared(t *testing.T) {
	for _, groups := range []bool{false, true} {
		prepared, pidx := testStore(t, Options{Groups: groups})
		plain, idx := testStore(t, Options{Groups: groups})
		v1 := textBytes(1, 20<<10)
		prev, prevLoc := saveVersion(t, prepared, pidx, v1, ID{})
		saveVersion(t, plain, idx, v1, ID{})

		v2, v3 := edited(v1, 1), edited(v1, 2)
		for _, v := range [][]byte{v2, v3} {
			if ok, err := prepared.PrepareVersion(bytes.NewReader(v), prev); !ok || err != nil {
				t.Fatalf("groups=%v: PrepareVersion = %v, %v", groups, ok, err)
			}
		}
		if n := len(prepared.deltas.byKey); n != 2 {
			t.Fatalf("groups=%v: %d records prepared, want 2", groups, n)
		}
		id, loc := saveVersion(t, prepared, pidx, v2, prev)
		if _, held := prepared.deltas.byKey[deltaKey{Sum(v3), prev, prevLoc}]; !held || len(prepared.deltas.byKey) != 1 {
			t.Fatalf("groups=%v: after the save of one of two prepared versions the memo holds %d, the other's held %v", groups, len(prepared.deltas.byKey), held)
		}
		_, ploc := saveVersion(t, plain, idx, v2, prev)
		if !loc.Delta() {
			t.Fatalf("groups=%v: prepared version stored as %+v, want a delta", groups, loc)
		}
		mustGet(t, prepared, id, v2)
		ph, pp := recordOf(t, prepared, id, loc)
		h, p := recordOf(t, plain, id, ploc)
		if ph != h || !bytes.Equal(pp, p) {
			t.Fatalf("groups=%v: prepared record %+v (%d bytes) differs from the encoded one %+v (%d bytes)", groups, ph, len(pp), h, len(p))
		}
	}
}

// PrepareVersion prepares nothing for what a Batch would not store as a
// delta of prev.
func TestPrepareVersionDeclines(t *testing.T) {
	s, idx := testStore(t, Options{Groups: true, ChunkThreshold: 64 << 10})
	v1 := textBytes(1, 20<<10)
	prev, _ := saveVersion(t, s, idx, v1, ID{})
	saveVersion(t, s, idx, textBytes(2, 20<<10), ID{})
	cases := map[string]struct {
		data []byte
		prev ID
	}{
		"the base itself":   {v1, prev},
		"already stored":    {textBytes(2, 20<<10), prev},
		"too short":         {v1[:deltaMin-1], prev},
		"chunked":           {textBytes(3, 100<<10), prev},
		"base never stored": {edited(v1, 1), Sum([]byte("never stored"))},
	}
	for name, c := range cases {
		if ok, err := s.PrepareVersion(bytes.NewReader(c.data), c.prev); ok || err != nil {
			t.Errorf("%s: PrepareVersion = %v, %v", name, ok, err)
		}
	}
	if n := len(s.deltas.byKey); n != 0 {
		t.Fatalf("%d records prepared, want none", n)
	}
}

// The memo keeps at most deltaMemoEntries records and deltaMemoBytes of
// them, dropping the oldest first, and its bookkeeping stays bounded
// however many records are taken.
func TestDeltaMemoBounded(t *testing.T) {
	m := newMemo[deltaKey](deltaMemoEntries, deltaMemoBytes)
	key := func(i int) deltaKey {
		return deltaKey{id: Sum([]byte{byte(i), byte(i >> 8)}), base: Locator{Offset: int64(i)}}
	}
	for i := range deltaMemoEntries + 10 {
		m.put(key(i), []byte{1})
	}
	if _, ok := m.take(key(9)); ok || len(m.byKey) != deltaMemoEntries {
		t.Fatalf("%d records held, the 10th still held %v", len(m.byKey), ok)
	}
	if _, ok := m.take(key(10)); !ok {
		t.Fatal("the 11th record was dropped")
	}
	big := make([]byte, deltaMemoBytes/4+1)
	for i := range 5 {
		m.put(key(100000+i), big)
	}
	if m.bytes > deltaMemoBytes {
		t.Fatalf("%d bytes held, at most %d may be", m.bytes, deltaMemoBytes)
	}
	for i := range 3 * deltaMemoEntries {
		m.put(key(200000+i), nil)
		m.take(key(200000 + i))
	}
	if len(m.order) > 2*deltaMemoEntries {
		t.Fatalf("%d keys in the memo's order, at most %d may be", len(m.order), 2*deltaMemoEntries)
	}
}
