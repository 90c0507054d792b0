package objects

import (
	"os"
	"testing"

	"github.com/ckpt/ckpt/objects/internal/pack"
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

// Putting every member of a group record copied from another store, some
// members per call (PutRecord for some, PutDecodedRecord, which returns
// their contents, for the others), writes that record once, and every
// member reads back from the one copy; a damaged record is put by neither.
func TestPutRecordCopiesAGroupOnceForAllItsMembers(t *testing.T) {
	src, _ := testStore(t, Options{Groups: true})
	blobs := groupBlobs()
	ids, placed := save(t, src, newMapIndex(), blobs...)
	records := map[groupKey][]Placement{}
	var order []groupKey
	var recordBytesTotal int64
	for _, p := range placed {
		k := groupKey{p.Loc.Pack, p.Loc.Offset}
		if records[k] == nil {
			order = append(order, k)
			recordBytesTotal += int64(p.Loc.Length)
		}
		records[k] = append(records[k], p)
	}

	content := map[ID][]byte{}
	for i, id := range ids {
		content[id] = blobs[i]
	}

	dst, idx := testStore(t, Options{Groups: true})
	b := dst.NewBatch()
	defer b.Close()
	for _, k := range order {
		members := records[k]
		rec := recordBytes(t, src, members[0].Loc)
		damaged := append([]byte(nil), rec...)
		damaged[len(damaged)-1] ^= 1
		mustCorrupt(t, b.PutRecord(damaged, members))
		_, err := b.PutDecodedRecord(damaged, members)
		mustCorrupt(t, err)
		half := (len(members) + 1) / 2
		if err := b.PutRecord(rec, members[:half]); err != nil {
			t.Fatalf("PutRecord of %d members of the record at %d: %v", half, k.offset, err)
		}
		got, err := b.PutDecodedRecord(rec, members[half:])
		if err != nil {
			t.Fatalf("PutDecodedRecord of %d members of the record at %d: %v", len(members)-half, k.offset, err)
		}
		for i, p := range members[half:] {
			if string(got[i]) != string(content[p.ID]) {
				t.Fatalf("PutDecodedRecord returned the wrong content for member %d", p.Loc.Member)
			}
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

// DecodeRecord returns every member a call names from one verification of
// the record, and fails the whole call when the record is damaged or a
// locator or id does not fit it.
func TestDecodeRecordOfAGroupVerifiesEveryMember(t *testing.T) {
	src, _ := testStore(t, Options{Groups: true})
	blobs := groupBlobs()[:40]
	ids, placed := save(t, src, newMapIndex(), blobs...)
	members := map[groupKey][]Placement{}
	for _, p := range placed {
		k := groupKey{p.Loc.Pack, p.Loc.Offset}
		members[k] = append(members[k], p)
	}
	want := map[ID][]byte{}
	for i, id := range ids {
		want[id] = blobs[i]
	}
	for _, ms := range members {
		rec := recordBytes(t, src, ms[0].Loc)
		got, err := src.DecodeRecord(rec, ms)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range ms {
			if string(got[i]) != string(want[p.ID]) {
				t.Fatalf("member %d: wrong content", p.Loc.Member)
			}
		}
		if len(ms) < 2 {
			continue
		}
		swapped := append([]Placement(nil), ms...)
		swapped[1].ID = ms[0].ID // member 1's locator, member 0's id
		_, err = src.DecodeRecord(rec, swapped)
		mustCorrupt(t, err)
		moved := append([]Placement(nil), ms...)
		moved[1].Loc.Offset++
		_, err = src.DecodeRecord(rec, moved)
		mustCorrupt(t, err)
		damaged := append([]byte(nil), rec...)
		damaged[len(damaged)-1] ^= 1
		_, err = src.DecodeRecord(damaged, ms)
		mustCorrupt(t, err)
	}
}

// PutDecodedRecord returns a compressed group's members as slices of its
// decoded payload when they hold most of it (no copy), and copies a few
// small members out of it, so that they do not keep the whole payload
// alive.
func TestPutDecodedRecordKeepsAGroupAliveOnlyForMostOfIt(t *testing.T) {
	src, _ := testStore(t, Options{Groups: true})
	_, placed := save(t, src, newMapIndex(), groupBlobs()...)
	records := map[groupKey][]Placement{}
	var largest groupKey
	for _, p := range placed {
		if p.Loc.Flags&pack.FlagGroup == 0 || p.Loc.Flags&pack.FlagCompressed == 0 {
			continue
		}
		k := groupKey{p.Loc.Pack, p.Loc.Offset}
		records[k] = append(records[k], p)
		if len(records[k]) > len(records[largest]) {
			largest = k
		}
	}
	members := records[largest]
	if len(members) < 8 {
		t.Fatalf("the largest compressed group holds %d members; want several", len(members))
	}
	rec := recordBytes(t, src, members[0].Loc)
	var total int64
	smallest := members[0]
	for _, p := range members {
		total += p.Loc.Size
		if p.Loc.Size < smallest.Loc.Size {
			smallest = p
		}
	}
	dst, _ := testStore(t, Options{Groups: true})
	b := dst.NewBatch()
	defer b.Close()
	few, err := b.PutDecodedRecord(rec, []Placement{smallest})
	if err != nil {
		t.Fatal(err)
	}
	if int64(cap(few[0])) > total/2 {
		t.Fatalf("a member of %d bytes keeps %d bytes alive, of a group of %d", smallest.Loc.Size, cap(few[0]), total)
	}
	all, err := b.PutDecodedRecord(rec, members)
	if err != nil {
		t.Fatal(err)
	}
	shared := 0
	for i := range all {
		if int64(cap(all[i])) > total/2 {
			shared++
		}
	}
	if shared == 0 {
		t.Fatalf("every member of the group was copied out of its payload")
	}
}
