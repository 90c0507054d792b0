package objects

import (
	"os"
	"testing"
)

// recordBytes is the stored record at loc, as a copy of a pack range kept
// elsewhere (a remote) holds it.
func recordBytes(t *testing.T, s *Store, loc Locator) []byte {
	t.Helper()
	pack, err := os.ReadFile(s.PackPath(loc.Pack))
	if err != nil {
		t.Fatal(err)
	}
	return pack[loc.Offset : loc.Offset+int64(loc.Length)]
}

// Putting every member of a group record copied from another store writes
// that record once, and every member reads back from the one copy.
func TestPutRecordCopiesAGroupOnceForAllItsMembers(t *testing.T) {
	src, _ := testStore(t, Options{Groups: true})
	blobs := groupBlobs()
	ids, placed := save(t, src, newMapIndex(), blobs...)
	records := map[groupKey]bool{}
	var recordBytesTotal int64
	for _, p := range placed {
		if k := (groupKey{p.Loc.Pack, p.Loc.Offset}); !records[k] {
			records[k] = true
			recordBytesTotal += int64(p.Loc.Length)
		}
	}

	dst, idx := testStore(t, Options{Groups: true})
	b := dst.NewBatch()
	defer b.Close()
	for _, p := range placed {
		if err := b.PutRecord(recordBytes(t, src, p.Loc), p.Loc, p.ID); err != nil {
			t.Fatalf("PutRecord of %s: %v", p.ID.Short(), err)
		}
	}
	copied, err := b.Sync()
	if err != nil {
		t.Fatal(err)
	}
	idx.commit(copied)
	if len(copied) != len(placed) {
		t.Fatalf("%d placements for %d members", len(copied), len(placed))
	}
	var packBytes int64
	seen := map[uint32]bool{}
	for _, p := range copied {
		if !seen[p.Loc.Pack] {
			seen[p.Loc.Pack] = true
			fi, err := os.Stat(dst.PackPath(p.Loc.Pack))
			if err != nil {
				t.Fatal(err)
			}
			packBytes += fi.Size()
		}
	}
	if packBytes > recordBytesTotal+int64(len(seen))*64 {
		t.Fatalf("the copy's packs hold %d bytes for %d bytes of %d group records: a group was written more than once",
			packBytes, recordBytesTotal, len(records))
	}
	for i, id := range ids {
		mustGet(t, dst, id, blobs[i])
	}
}
