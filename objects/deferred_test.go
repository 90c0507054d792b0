package objects

import (
	"context"
	"slices"
	"testing"

	"github.com/ckpt/ckpt/internal/testbound"
	"github.com/ckpt/ckpt/objects/internal/pack"
)

// TestDeferredBatchStoresRawAndMarksItsPacks saves compressible text with
// DeferCompression: every record is stored uncompressed, every pack the
// save wrote is marked before Sync returns, the blobs read back verified,
// and a Rewriter that regroups the small blobs and recompresses the large
// one shrinks them; removing the old packs removes their marks.
func TestDeferredBatchStoresRawAndMarksItsPacks(t *testing.T) {
	s, idx := testStore(t, Options{Groups: true, PackSize: 256 << 10})
	var blobs [][]byte
	for i := range testbound.Scale(50, 200) {
		blobs = append(blobs, textBytes(uint64(i), 2000+i*13))
	}
	blobs = append(blobs, textBytes(999, 2<<20)) // plain, above the group limit
	placed := saveDeferred(t, s, idx, blobs)
	written := map[uint32]bool{}
	var rawBytes int64
	for _, p := range placed {
		if p.Loc.Flags&pack.FlagCompressed != 0 {
			t.Fatalf("deferred save compressed a record: %+v", p.Loc)
		}
		if !written[p.Loc.Pack] || p.Loc.Flags&pack.FlagGroup == 0 {
			rawBytes += int64(p.Loc.Length)
		}
		written[p.Loc.Pack] = true
	}
	marked, err := s.DeferredPacks()
	if err != nil {
		t.Fatal(err)
	}
	for n := range written {
		if !slices.Contains(marked, n) {
			t.Fatalf("pack %d written by the deferred save is not marked (%v)", n, marked)
		}
	}
	for _, data := range blobs {
		mustGet(t, s, Sum(data), data)
	}

	rw := s.newRewriter(s.recodec)
	defer rw.Close()
	var moved []Placement
	for _, data := range blobs {
		id := Sum(data)
		loc, _, _ := idx.Locator(id)
		if loc.Flags&pack.FlagGroup != 0 {
			if err := rw.Regroup(id, loc); err != nil {
				t.Fatal(err)
			}
			continue
		}
		nl, err := rw.Recompress(id, loc)
		if err != nil {
			t.Fatal(err)
		}
		if nl.Flags&pack.FlagCompressed == 0 || nl.Length >= loc.Length {
			t.Fatalf("recompressed %+v into %+v", loc, nl)
		}
		moved = append(moved, Placement{id, nl})
	}
	regrouped, err := rw.Sync()
	if err != nil {
		t.Fatal(err)
	}
	moved = append(moved, regrouped...)
	rw.Close()
	idx.commit(moved)
	for _, n := range marked {
		if err := s.RemovePack(n); err != nil {
			t.Fatal(err)
		}
	}
	if left, err := s.DeferredPacks(); err != nil || len(left) != 0 {
		t.Fatalf("marks left after the packs went: %v, %v", left, err)
	}
	packs, _ := s.Packs()
	var after int64
	for _, n := range packs {
		after += s.mu.packs[n].size
	}
	if after*2 > rawBytes {
		t.Fatalf("recompressed store holds %d bytes, the raw records %d", after, rawBytes)
	}
	for _, data := range blobs {
		mustGet(t, s, Sum(data), data)
	}
}

// RewriteAtSaveLevel moves a deferred pack's blobs as Rewrite does (the
// small ones regrouped, the large one recompressed, every one readable at
// its new place), compressed at the save's level: larger than Rewrite's
// records at the recompression's level, smaller than the raw ones.
func TestRewriteAtSaveLevelCompressesAsASaveWould(t *testing.T) {
	s, idx := testStore(t, Options{Groups: true, Level: 1, RecompressLevel: 4})
	var blobs [][]byte
	for i := range 40 {
		blobs = append(blobs, textBytes(uint64(i), 3000+i*17))
	}
	blobs = append(blobs, textBytes(77, 1<<20))
	placed := saveDeferred(t, s, idx, blobs)
	var moves []Move
	var raw int64
	for _, p := range placed {
		how := MoveRecompress
		if p.Loc.Flags&pack.FlagGroup != 0 {
			how = MoveRegroup
		}
		moves = append(moves, Move{ID: p.ID, Loc: p.Loc, How: how})
		raw += int64(p.Loc.Length)
	}
	size := func(placed []Placement) (n int64) {
		seen := map[[2]int64]bool{}
		for _, p := range placed {
			if k := [2]int64{int64(p.Loc.Pack), p.Loc.Offset}; !seen[k] {
				seen[k] = true
				n += int64(p.Loc.Length)
			}
		}
		return n
	}
	best, err := s.Rewrite(context.Background(), moves, nil)
	if err != nil {
		t.Fatal(err)
	}
	quick, err := s.RewriteAtSaveLevel(context.Background(), moves, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, q := size(best), size(quick); !(b < q && q < raw) {
		t.Fatalf("records of %d raw bytes rewritten into %d at the recompression's level and %d at the save's; want best < save < raw", raw, b, q)
	}
	idx.commit(quick)
	for _, data := range blobs {
		mustGet(t, s, Sum(data), data)
	}
}

// saveDeferred stores blobs in one batch with DeferCompression, syncs and
// commits it, and returns the placements.
func saveDeferred(t *testing.T, s *Store, idx *mapIndex, blobs [][]byte) []Placement {
	t.Helper()
	b := s.NewBatch()
	b.DeferCompression()
	for _, data := range blobs {
		if _, err := b.PutBytes(data); err != nil {
			t.Fatal(err)
		}
	}
	placed, err := b.Sync()
	b.Close()
	if err != nil {
		t.Fatal(err)
	}
	idx.commit(placed)
	return placed
}
