package objects

import (
	"context"
	"errors"
	"testing"
)

// TestRewriteStoresDeltasAgainstTheBasesThatQualify recompresses deferred
// blobs offered bases (Move.Bases), slice by slice as the engine does: a
// blob whose base an earlier slice moved out of the deferred pack (and
// committed), and one whose base moved whole earlier in the same rewrite,
// become delta records of a few hundred bytes against them; a blob
// offered a base that became a delta itself takes the next one offered,
// stored whole, so that every delta is one deep; a blob offered only a
// base still waiting in a deferred pack, and one whose base shares nothing
// with it, move as they would without bases. After the commit and the
// deferred pack's removal every blob reads back verified, and each delta
// names its base.
func TestRewriteStoresDeltasAgainstTheBasesThatQualify(t *testing.T) {
	s, idx := testStore(t, Options{Groups: true, Writers: 1})
	v0 := textBytes(1, 40_000)
	v1 := edited(v0, 1)
	v2 := edited(v1, 2)
	w0 := textBytes(5, 30_000)
	w1 := edited(w0, 1)
	later := edited(v0, 3)
	waiting := edited(v0, 4)
	unrelated := randomBytes(3, 20_000)
	saveDeferred(t, s, idx, [][]byte{v0, v1, v2, w0, w1, later, unrelated, waiting})
	deferred, err := s.DeferredPacks()
	if err != nil || len(deferred) != 1 {
		t.Fatalf("deferred packs %v, %v; want one", deferred, err)
	}

	move := func(data []byte, bases ...[]byte) Move {
		id := Sum(data)
		loc, _, _ := idx.Locator(id)
		m := Move{ID: id, Loc: loc, How: MoveRegroup}
		for _, b := range bases {
			m.Bases = append(m.Bases, Sum(b))
		}
		return m
	}
	// A first slice moves v0 out of the deferred pack: committed, it is
	// a base that qualifies.
	first, err := s.Rewrite(context.Background(), []Move{move(v0)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	idx.commit(first)
	// waiting is not moved: it stays in the deferred pack, as a base a
	// later slice will rewrite.
	moves := []Move{move(v1, v0), move(v2, v1, v0), move(w0), move(w1, w0), move(later, waiting), move(unrelated, v0)}
	placed, err := s.Rewrite(context.Background(), moves, nil)
	if err != nil {
		t.Fatal(err)
	}
	idx.commit(placed)
	wantBase := map[ID]ID{Sum(v1): Sum(v0), Sum(v2): Sum(v0), Sum(w1): Sum(w0)}
	for _, p := range placed {
		base, isDelta := wantBase[p.ID]
		if p.Loc.Delta() != isDelta {
			t.Fatalf("blob %s placed at %+v; delta wanted: %v", p.ID.Short(), p.Loc, isDelta)
		}
		if !isDelta {
			continue
		}
		if p.Loc.Length > 1024 {
			t.Errorf("delta of %s takes %d bytes", p.ID.Short(), p.Loc.Length)
		}
		if got, err := s.DeltaBase(p.ID, p.Loc); err != nil || got != base {
			t.Errorf("DeltaBase(%s) = %s, %v; want %s", p.ID.Short(), got.Short(), err, base.Short())
		}
	}
	// Move what the slice left, then drop the deferred pack.
	rest, err := s.Rewrite(context.Background(), []Move{move(waiting)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	idx.commit(rest)
	if err := s.RemovePack(deferred[0]); err != nil {
		t.Fatal(err)
	}
	for _, data := range [][]byte{v0, v1, v2, w0, w1, later, unrelated, waiting} {
		mustGet(t, s, Sum(data), data)
	}
}

// A rewrite's stop is asked between the bases Delta tries: with two that
// qualify, a stop that says so after the first ends Delta with its error
// and nothing written; one that never does lets it store the delta.
func TestDeltaAsksStopBetweenItsBases(t *testing.T) {
	s, idx := testStore(t, Options{Groups: true, Writers: 1})
	v0 := textBytes(1, 40_000)
	v1 := edited(v0, 1)
	v2 := edited(v1, 2)
	saveDeferred(t, s, idx, [][]byte{v0, v1, v2})
	var moves []Move
	for _, b := range [][]byte{v0, v1} {
		loc, _, _ := idx.Locator(Sum(b))
		moves = append(moves, Move{ID: Sum(b), Loc: loc, How: MoveRegroup})
	}
	first, err := s.Rewrite(context.Background(), moves, nil) // both bases committed outside the deferred pack
	if err != nil {
		t.Fatal(err)
	}
	idx.commit(first)
	loc, _, _ := idx.Locator(Sum(v2))
	errStop := errors.New("stop")
	for _, stopAfter := range []int{1, 0} {
		rw := s.newRewriter(s.recodec)
		asked := 0
		rw.stop = func() error {
			if asked++; asked == stopAfter {
				return errStop
			}
			return nil
		}
		_, ok, err := rw.Delta(Sum(v2), loc, []ID{Sum(v1), Sum(v0)})
		packs := rw.Packs()
		rw.Close()
		if stopAfter == 1 && (!errors.Is(err, errStop) || ok || len(packs) != 0) {
			t.Fatalf("Delta with a stop after the first base: %v, stored %v, %d packs", err, ok, len(packs))
		}
		if stopAfter == 0 && (err != nil || !ok || asked != 1) {
			t.Fatalf("Delta with a stop that never says so: %v, stored %v, asked %d times", err, ok, asked)
		}
	}
}
