package objects

import (
	"bytes"
	"errors"
	"testing"

	"github.com/ckpt/ckpt/objects/internal/pack"
)

// Both versions of a file stored as a delta are kept in memory: a session
// reads them from there, verified, even once their records on disk are
// damaged, while the Store's own reads and a SweepSession's (verify's)
// still report the damage.
func TestSessionReadsTheVersionsADeltaKept(t *testing.T) {
	s, _, base, delta, v1 := deltaPair(t)
	v0, err := s.Get(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []ID{base, delta} {
		loc, err := s.Stat(id)
		if err != nil {
			t.Fatal(err)
		}
		flip(t, s.PackPath(loc.Pack), loc.Offset+pack.RecordHeaderLen+loc.PayloadLen()/2)
	}
	session := s.ReadSession()
	for id, want := range map[ID][]byte{base: v0, delta: v1} {
		got, err := session.Get(id)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("session read of %s: %d bytes, %v; want the kept %d", id.Short(), len(got), err, len(want))
		}
		got[0] ^= 1 // the caller's own copy
		if _, err := s.Get(id); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("store read of the damaged %s: %v, want ErrCorrupt", id.Short(), err)
		}
		if _, err := s.SweepSession().Get(id); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("sweep (verify's) read of the damaged %s: %v, want ErrCorrupt", id.Short(), err)
		}
	}
	if got, err := session.Get(delta); err != nil || !bytes.Equal(got, v1) {
		t.Fatalf("session read after a caller changed its copy: %v", err)
	}
}

// A kept content that no longer hashes to its id is not used, and no
// longer kept: the session reads the record from disk. A blob the index
// no longer holds is not read from memory either.
func TestSessionChecksAKeptVersion(t *testing.T) {
	s, idx, _, delta, v1 := deltaPair(t)
	kept, ok := s.recent.get(delta)
	if !ok {
		t.Fatal("the delta's content is not kept")
	}
	kept[len(kept)/2] ^= 1
	got, err := s.ReadSession().Get(delta)
	if err != nil || !bytes.Equal(got, v1) {
		t.Fatalf("session read past a damaged kept copy: %d bytes, %v", len(got), err)
	}
	if s.recent.has(delta) {
		t.Fatal("the damaged kept copy is still kept")
	}
	idx.mu.Lock()
	delete(idx.locs, delta)
	idx.mu.Unlock()
	if _, err := s.ReadSession().Get(delta); !errors.Is(err, ErrNotFound) {
		t.Fatalf("session read of a blob the index lost: %v, want ErrNotFound", err)
	}
}
