package objects

import (
	"os"
	"slices"
	"testing"

	"github.com/ckpt/ckpt/objects/internal/pack"
)

// TestRewriterMovesLiveRecords copies the live half of a pack into a fresh
// pack, switches the locators, removes the old pack, and checks every live
// blob still reads back while the old pack is gone and later saves append
// after the copies.
func TestRewriterMovesLiveRecords(t *testing.T) {
	s, idx := testStore(t, Options{})
	var blobs [][]byte
	for i := range 20 {
		if i%3 == 0 {
			blobs = append(blobs, textBytes(uint64(i), 5000))
		} else {
			blobs = append(blobs, randomBytes(uint64(i), 3000))
		}
	}
	ids, ps := save(t, s, idx, blobs...)
	old := ps[0].Loc.Pack
	rw := s.newRewriter(s.recodec)
	defer rw.Close()
	var moved []Placement
	for i := 0; i < len(ids); i += 2 {
		loc, _, _ := idx.Locator(ids[i])
		nl, err := rw.Copy(ids[i], loc)
		if err != nil {
			t.Fatal(err)
		}
		if nl.Pack == old || nl.Length != loc.Length || nl.Flags != loc.Flags || nl.Size != loc.Size {
			t.Fatalf("copy of %s: %+v from %+v", ids[i].Short(), nl, loc)
		}
		moved = append(moved, Placement{ids[i], nl})
	}
	if _, err := rw.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := rw.Packs(); len(got) != 1 || got[0] == old {
		t.Fatalf("rewriter packs = %v, old pack %d", got, old)
	}
	rw.Close()
	idx.commit(moved)
	if err := s.RemovePack(old); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.PackPath(old)); !os.IsNotExist(err) {
		t.Fatalf("old pack still there: %v", err)
	}
	for i := 0; i < len(ids); i += 2 {
		mustGet(t, s, ids[i], blobs[i])
	}
	_, err := s.Get(ids[1])
	mustCorrupt(t, err) // its locator still names the removed pack

	fresh := randomBytes(99, 1000)
	nid, nps := save(t, s, idx, fresh)
	mustGet(t, s, nid[0], fresh)
	if nps[0].Loc.Pack == old {
		t.Fatalf("a save appended to the removed pack %d", old)
	}
}

// TestRewriterRefusesDamage checks that a record that does not verify is
// never copied.
func TestRewriterRefusesDamage(t *testing.T) {
	s, idx := testStore(t, Options{})
	data := randomBytes(1, 4000)
	ids, ps := save(t, s, idx, data)
	loc := ps[0].Loc
	f, err := os.OpenFile(s.PackPath(loc.Pack), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{^data[100]}, loc.Offset+pack.RecordHeaderLen+100); err != nil {
		t.Fatal(err)
	}
	f.Close()
	rw := s.newRewriter(s.recodec)
	defer rw.Close()
	_, err = rw.Copy(ids[0], loc)
	mustCorrupt(t, err)
	if got := rw.Packs(); len(got) != 0 {
		t.Fatalf("a damaged record created packs %v", got)
	}
}

// A group record is copied whole, so it is checked whole: damage to a
// member other than the one copied (one no longer live, say) copies
// nothing either.
func TestRewriterRefusesAGroupDamagedElsewhere(t *testing.T) {
	s, idx := testStore(t, Options{Groups: true})
	blobs := groupBlobs()[:50]
	ids, _ := save(t, s, idx, blobs...)
	first, _ := s.Stat(ids[0])
	last, _ := s.Stat(ids[len(ids)-1])
	if first.Offset != last.Offset {
		t.Fatalf("the blobs are not one group: %+v, %+v", first, last)
	}
	flip(t, s.PackPath(last.Pack), last.Offset+int64(last.Length)-1)
	mustGet(t, s, ids[0], blobs[0]) // the member copied still reads back
	rw := s.newRewriter(s.recodec)
	defer rw.Close()
	_, err := rw.Copy(ids[0], first)
	mustCorrupt(t, err)
	if got := rw.Packs(); len(got) != 0 {
		t.Fatalf("a damaged group created packs %v", got)
	}
}

// TestRewriterRollsOverAtPackSize checks that copies respect the pack cap.
func TestRewriterRollsOverAtPackSize(t *testing.T) {
	s, idx := testStore(t, Options{PackSize: 8 << 10})
	var blobs [][]byte
	for i := range 10 {
		blobs = append(blobs, randomBytes(uint64(i+10), 3000))
	}
	ids, _ := save(t, s, idx, blobs...)
	before, _ := s.Packs()
	rw := s.newRewriter(s.recodec)
	defer rw.Close()
	for _, id := range ids {
		loc, _, _ := idx.Locator(id)
		nl, err := rw.Copy(id, loc)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(before, nl.Pack) {
			t.Fatalf("copy went to pre-existing pack %d", nl.Pack)
		}
		idx.set(id, nl)
	}
	if _, err := rw.Sync(); err != nil {
		t.Fatal(err)
	}
	if n := len(rw.Packs()); n < 3 {
		t.Fatalf("30 KB of copies under an 8 KiB cap made %d packs", n)
	}
	for _, n := range before {
		if err := s.RemovePack(n); err != nil {
			t.Fatal(err)
		}
	}
	for i, id := range ids {
		mustGet(t, s, id, blobs[i])
	}
}

// TestTruncatePackReclaimsTail cuts a pack after its first record and checks
// that the record survives and the next save appends at the cut.
func TestTruncatePackReclaimsTail(t *testing.T) {
	s, idx := testStore(t, Options{})
	a, b := randomBytes(5, 2000), randomBytes(6, 2000)
	ids, ps := save(t, s, idx, a, b)
	keep := ps[0]
	if ps[1].Loc.Offset < keep.Loc.Offset {
		keep = ps[1]
	}
	end := keep.Loc.Offset + int64(keep.Loc.Length)
	if err := s.TruncatePack(keep.Loc.Pack, end); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(s.PackPath(keep.Loc.Pack)); err != nil || fi.Size() != end {
		t.Fatalf("pack size after truncate: %v %v, want %d", fi, err, end)
	}
	mustGet(t, s, keep.ID, map[ID][]byte{ids[0]: a, ids[1]: b}[keep.ID])
	c := randomBytes(7, 500)
	_, cps := save(t, s, idx, c)
	if cps[0].Loc.Pack == keep.Loc.Pack && cps[0].Loc.Offset != end {
		t.Fatalf("next record at %d, want the cut %d", cps[0].Loc.Offset, end)
	}
	mustGet(t, s, cps[0].ID, c)
	if err := s.TruncatePack(keep.Loc.Pack, 3); err == nil {
		t.Fatal("truncating into the pack header succeeded")
	}
}
