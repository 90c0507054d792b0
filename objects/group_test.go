package objects

import (
	"bytes"
	"os"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/klauspost/compress/zstd"

	"github.com/ckpt/ckpt/internal/storefs"
	"github.com/ckpt/ckpt/internal/testbound"
	"github.com/ckpt/ckpt/objects/internal/pack"
)

// groupBlobs returns small text blobs, more than a group's worth of them
// (300 of 1 to 6 KB with the long tests, 60 of 1 to 42 KB without), small
// random ones, an empty one, and one at the group size limit.
func groupBlobs() [][]byte {
	var blobs [][]byte
	texts, step := testbound.Scale(60, 300), testbound.Scale(700, 17)
	for i := range texts {
		blobs = append(blobs, textBytes(uint64(i), 1000+i*step))
	}
	for i := range 20 {
		blobs = append(blobs, randomBytes(uint64(i), 3000))
	}
	return append(blobs, nil, []byte("x"), textBytes(999, groupBlobMax))
}

func TestGroupsHoldSmallBlobsAndReadBack(t *testing.T) {
	s, idx := testStore(t, Options{Groups: true})
	blobs := groupBlobs()
	ids, placed := save(t, s, idx, blobs...)
	records := map[groupKey]int{}
	for _, p := range placed {
		if p.Loc.Flags&pack.FlagGroup == 0 {
			t.Fatalf("blob of %d bytes stored outside a group: %+v", p.Loc.Size, p.Loc)
		}
		records[groupKey{p.Loc.Pack, p.Loc.Offset}]++
	}
	if len(records) < 2 || len(records) > len(blobs)/10 {
		t.Fatalf("%d blobs went into %d group records", len(blobs), len(records))
	}
	for i, id := range ids {
		mustGet(t, s, id, blobs[i])
		loc, _ := s.Stat(id)
		got, err := s.ReadRecord(loc)
		if err != nil || !bytes.Equal(got, blobs[i]) {
			t.Fatalf("ReadRecord of member %d: %v", loc.Member, err)
		}
		if len(got) > 0 {
			got[0] ^= 1 // the caller owns what it gets: the cached group stays intact
			mustGet(t, s, id, blobs[i])
		}
	}
}

func TestSyncWritesTheOpenGroup(t *testing.T) {
	s, _ := testStore(t, Options{Groups: true})
	b := s.NewBatch()
	defer b.Close()
	for i := range 3 {
		if _, err := b.PutBytes(textBytes(uint64(i), 500)); err != nil {
			t.Fatal(err)
		}
	}
	placed, err := b.Sync()
	if err != nil || len(placed) != 3 {
		t.Fatalf("Sync returned %d placements, %v; want the 3 blobs of the open group", len(placed), err)
	}
	if placed, err = b.Sync(); err != nil || len(placed) != 0 {
		t.Fatalf("second Sync returned %d placements, %v", len(placed), err)
	}
}

// Damage to a group record is never hidden, not even by the decoded group
// the store keeps: damage to the record's header fails every member, and
// damage to its payload fails the members it reaches, while every other
// member still reads back exactly.
func TestGroupDamageIsNeverHidden(t *testing.T) {
	s, idx := testStore(t, Options{Groups: true})
	blobs := groupBlobs()[:50]
	ids, _ := save(t, s, idx, blobs...)
	loc, _ := s.Stat(ids[7])
	for _, spot := range []int64{5, 40, pack.RecordHeaderLen + 3, int64(loc.Length) / 2, int64(loc.Length) - 1} {
		mustGet(t, s, ids[len(ids)-1], blobs[len(ids)-1]) // the whole group is cached now
		flip(t, s.PackPath(loc.Pack), loc.Offset+spot)
		damaged := 0
		for i, id := range ids {
			got, err := s.Get(id)
			if err != nil {
				mustCorrupt(t, err)
				damaged++
			} else if !bytes.Equal(got, blobs[i]) {
				t.Fatalf("damage at %d: member %d read back wrong bytes", spot, i)
			}
		}
		if damaged == 0 || (spot < pack.RecordHeaderLen && damaged != len(ids)) {
			t.Fatalf("damage at %d: %d of %d members read as corrupt", spot, damaged, len(ids))
		}
		flip(t, s.PackPath(loc.Pack), loc.Offset+spot)
	}
	for i, id := range ids {
		mustGet(t, s, id, blobs[i])
	}
}

func TestGroupLocatorMismatchIsCorrupt(t *testing.T) {
	s, idx := testStore(t, Options{Groups: true})
	blobs := groupBlobs()[:5]
	ids, _ := save(t, s, idx, blobs...)
	loc, _ := s.Stat(ids[1])
	for _, bad := range []Locator{
		{Pack: loc.Pack, Offset: loc.Offset, Length: loc.Length, Flags: loc.Flags, Size: loc.Size, Member: 2},
		{Pack: loc.Pack, Offset: loc.Offset, Length: loc.Length, Flags: loc.Flags, Size: loc.Size + 1, Member: 1},
		{Pack: loc.Pack, Offset: loc.Offset, Length: loc.Length, Flags: loc.Flags, Size: loc.Size, Member: 5},
		{Pack: loc.Pack, Offset: loc.Offset, Length: loc.Length, Flags: loc.Flags &^ pack.FlagGroup, Size: loc.Size},
	} {
		idx.set(ids[1], bad)
		_, err := s.Get(ids[1])
		mustCorrupt(t, err)
	}
}

// writeVersion1Pack writes pack n as a version-1 pack holding blobs as
// compressed or raw records, and returns their locators.
func writeVersion1Pack(t *testing.T, s *Store, n uint32, blobs [][]byte) []Locator {
	t.Helper()
	packData := packHeaderOf(pack.Version1)
	var locs []Locator
	for _, data := range blobs {
		payload, flags, err := s.codec.compress(nil, data, true)
		if err != nil {
			t.Fatal(err)
		}
		h := recordHeader{flags: flags, id: Sum(data), size: int64(len(data)), payloadLen: uint32(len(payload))}
		locs = append(locs, Locator{Pack: n, Offset: int64(len(packData)), Length: uint32(h.recordLen()), Flags: flags, Size: h.size})
		packData = append(appendRecordHeader(packData, h), payload...)
	}
	if err := os.WriteFile(s.PackPath(n), packData, 0o600); err != nil {
		t.Fatal(err)
	}
	return locs
}

func TestVersion1PacksAreReadAndNeverAppended(t *testing.T) {
	dir := t.TempDir()
	idx := newMapIndex()
	s, err := Open(dir, idx, Options{Groups: true})
	if err != nil {
		t.Fatal(err)
	}
	old := [][]byte{textBytes(1, 4000), randomBytes(2, 100)}
	locs := writeVersion1Pack(t, s, 0, old)
	s.Close()
	if s, err = Open(dir, idx, Options{Groups: true}); err != nil { // knows pack 0 from the directory
		t.Fatal(err)
	}
	defer s.Close()
	for i, data := range old {
		idx.set(Sum(data), locs[i])
		mustGet(t, s, Sum(data), data)
	}
	var scanned int
	if err := s.ScanPack(0, func(ID, Locator) error { scanned++; return nil }); err != nil || scanned != 2 {
		t.Fatalf("scan of the version-1 packData: %d records, %v", scanned, err)
	}
	ids, placed := save(t, s, idx, textBytes(3, 800))
	if placed[0].Loc.Pack == 0 {
		t.Fatal("a batch appended to a version-1 pack")
	}
	mustGet(t, s, ids[0], textBytes(3, 800))

	// A group record has no place in a version-1 pack.
	grp := &group{}
	grp.ids, grp.sizes, grp.data = []ID{Sum([]byte("ab"))}, []uint32{2}, []byte("ab")
	raw := grp.payload(nil)
	h := recordHeader{flags: pack.FlagGroup, id: Sum(raw), size: int64(len(raw)), payloadLen: uint32(len(raw))}
	packData := append(appendRecordHeader(packHeaderOf(pack.Version1), h), raw...)
	if err := os.WriteFile(s.PackPath(9), packData, 0o600); err != nil {
		t.Fatal(err)
	}
	idx.set(Sum([]byte("ab")), Locator{Pack: 9, Offset: int64(pack.HeaderLen), Length: uint32(h.recordLen()), Flags: pack.FlagGroup, Size: 2})
	_, err = s.Get(Sum([]byte("ab")))
	mustCorrupt(t, err)
	mustCorrupt(t, s.ScanPack(9, func(ID, Locator) error { return nil }))
}

func TestRewriterCopiesAGroupOnce(t *testing.T) {
	s, idx := testStore(t, Options{Groups: true})
	blobs := groupBlobs()[:40]
	ids, _ := save(t, s, idx, blobs...)
	before, _ := s.Packs()
	rw := s.newRewriter(s.recodec)
	defer rw.Close()
	var first Locator
	for i, id := range ids {
		loc, _, _ := idx.Locator(id)
		nl, err := rw.Copy(id, loc)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = nl
		}
		if nl.Pack != first.Pack || nl.Offset != first.Offset || nl.Member != loc.Member || nl.Size != loc.Size {
			t.Fatalf("member %d copied to %+v, first to %+v", loc.Member, nl, first)
		}
		idx.set(id, nl)
	}
	if _, err := rw.Sync(); err != nil {
		t.Fatal(err)
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

// TestGroupStartingWithRandomDataIsCompressed guards against judging a
// group by its first bytes: one random member must not leave the text
// after it uncompressed.
func TestGroupStartingWithRandomDataIsCompressed(t *testing.T) {
	s, idx := testStore(t, Options{Groups: true})
	blobs := [][]byte{randomBytes(1, 300<<10)}
	for i := range 12 {
		blobs = append(blobs, textBytes(uint64(i), 80<<10))
	}
	_, placed := save(t, s, idx, blobs...)
	loc := placed[0].Loc
	if loc.Flags&pack.FlagCompressed == 0 || int64(loc.Length) > (300<<10)+(12*80<<10)/2 {
		t.Fatalf("group of 300 KiB random and 960 KiB text stored in %d bytes, flags %#x", loc.Length, loc.Flags)
	}
}

// A read of one member decodes its group only up to that member: a group
// whose last zstd block cannot be decoded still yields its first members,
// verified, through the store and a session, and reports its last member
// as corrupt.
func TestAMemberIsDecodedOnlyUpToItsEnd(t *testing.T) {
	s, blobs, ids, first, raw := compressedGroup(t)
	frames := groupFrames(t, raw)
	last := frames[len(frames)-1].src
	block := len(raw) - pack.RecordHeaderLen - len(last) + lastZstdBlock(t, last)
	// Block type 3 is reserved: no decoder gets past it.
	patchByte(t, s.PackPath(first.Pack), first.Offset+int64(pack.RecordHeaderLen+block), func(b byte) byte { return b | 0b110 })

	mustGet(t, s, ids[0], blobs[0])
	got, err := s.ReadSession().Get(ids[1])
	if err != nil || !bytes.Equal(got, blobs[1]) {
		t.Fatalf("second member through a session: %v", err)
	}
	_, err = s.Get(ids[len(ids)-1])
	mustCorrupt(t, err)
	_, err = s.ReadSession().Get(ids[len(ids)-1])
	mustCorrupt(t, err)
}

// A group frame whose header was damaged to declare a content of about
// 49 MiB is refused before it is decoded: a partial read must not
// allocate the window such a header asks for.
func TestADamagedFrameHeaderCannotBalloonAMemberRead(t *testing.T) {
	s, _, ids, loc, raw := compressedGroup(t)
	// Magic, then a frame header descriptor saying: single segment, a
	// 4-byte content size right after it.
	if fhd := raw[pack.RecordHeaderLen+4]; fhd>>6 != 2 || fhd>>5&1 != 1 || fhd&3 != 0 {
		t.Fatalf("frame header descriptor %#x is not the expected one", fhd)
	}
	declared := pack.RecordHeaderLen + 5
	// The size's top byte: 3 << 24 = 48 MiB more.
	patchByte(t, s.PackPath(loc.Pack), loc.Offset+int64(declared+3), func(byte) byte { return 3 })

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, get := range []func(ID) ([]byte, error){s.Get, s.ReadSession().Get} {
		_, err := get(ids[0])
		mustCorrupt(t, err)
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Fatalf("two reads of a damaged group allocated %d MiB", grew>>20)
	}
}

// compressedGroup stores 720 KiB of text in one compressed group record
// (several zstd blocks) and returns the blobs, their ids, the first one's
// locator and the record as stored.
func compressedGroup(t *testing.T) (s *Store, blobs [][]byte, ids []ID, loc Locator, raw []byte) {
	t.Helper()
	s, idx := testStore(t, Options{Groups: true})
	for i := range 12 {
		blobs = append(blobs, textBytes(uint64(i), 60<<10))
	}
	ids, _ = save(t, s, idx, blobs...)
	loc, _ = s.Stat(ids[0])
	last, _ := s.Stat(ids[len(ids)-1])
	if loc.Flags&pack.FlagCompressed == 0 || loc.Offset != last.Offset || loc.Pack != last.Pack {
		t.Fatalf("the blobs are not one compressed group: %+v, %+v", loc, last)
	}
	raw, err := s.rawRecord(loc)
	if err != nil {
		t.Fatal(err)
	}
	return s, blobs, ids, loc, raw
}

// lastZstdBlock returns the offset in frame, one zstd frame, of its last
// block's header, after checking that the frame has more than one block.
func lastZstdBlock(t *testing.T, frame []byte) int {
	t.Helper()
	fhd := frame[4]
	singleSegment := fhd>>5&1 == 1
	off := 5
	if !singleSegment {
		off++ // window descriptor
	}
	off += [4]int{0, 1, 2, 4}[fhd&3]
	fcs := [4]int{0, 2, 4, 8}[fhd>>6]
	if fhd>>6 == 0 && singleSegment {
		fcs = 1
	}
	off += fcs
	for blocks := 1; ; blocks++ {
		h := int(frame[off]) | int(frame[off+1])<<8 | int(frame[off+2])<<16
		if h&1 == 1 {
			if blocks < 2 {
				t.Fatalf("the group's frame has one block")
			}
			return off
		}
		size := h >> 3
		if h>>1&3 == 1 { // an RLE block holds one byte
			size = 1
		}
		off += 3 + size
	}
}

// groupFrames returns the frames of the compressed group record raw, each
// with its stored bytes.
func groupFrames(t *testing.T, raw []byte) []*groupFrame {
	t.Helper()
	h, err := parseRecordHeader(raw)
	if err != nil {
		t.Fatal(err)
	}
	stored := raw[pack.RecordHeaderLen:]
	frames, err := splitFrames(storedPayload(stored), h.size)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range frames {
		f.src = stored[f.off : f.off+f.n]
	}
	return frames
}

// fourFrameGroup saves 15 text blobs of 60 KiB into a store on fsys: one
// group of four frames, whose locator and frames (with their stored
// bytes) it returns.
func fourFrameGroup(t *testing.T, fsys vfs.FS) (s *Store, blobs [][]byte, ids []ID, loc Locator, frames []*groupFrame) {
	t.Helper()
	s, idx := testStore(t, Options{Groups: true, FS: fsys})
	for i := range 15 {
		blobs = append(blobs, textBytes(uint64(i), 60<<10))
	}
	ids, _ = save(t, s, idx, blobs...)
	loc, _ = s.Stat(ids[0])
	raw, err := s.rawRecord(loc)
	if err != nil {
		t.Fatal(err)
	}
	if frames = groupFrames(t, raw); len(frames) != 4 {
		t.Fatalf("a group of %d KiB is stored in %d frames, want 4", 15*60, len(frames))
	}
	return s, blobs, ids, loc, frames
}

// A member read fetches from the pack the record's header, its frame and
// block headers and the frames holding the table and the member, not the
// whole record: through the store and through a session, the first
// member of a four-frame group costs under half the record, a member of
// its last frame under three quarters, and a session's second read of a
// frame it fetched reads nothing more.
func TestAMemberReadFetchesOnlyItsFrames(t *testing.T) {
	var reads, read atomic.Int64
	s, blobs, ids, loc, _ := fourFrameGroup(t, countingFS{FS: storefs.OS, reads: &reads, bytes: &read})
	fetched := func(get func(ID) ([]byte, error), i int) int64 {
		read.Store(0)
		if got, err := get(ids[i]); err != nil || !bytes.Equal(got, blobs[i]) {
			t.Fatalf("member %d: %v", i, err)
		}
		return read.Load()
	}
	for name, get := range map[string]func() func(ID) ([]byte, error){
		"store":   func() func(ID) ([]byte, error) { return s.Get },
		"session": func() func(ID) ([]byte, error) { return s.ReadSession().Get },
	} {
		if n := fetched(get(), 0); n*2 >= int64(loc.Length) {
			t.Errorf("%s: the first member fetched %d bytes of a %d-byte record", name, n, loc.Length)
		}
		if n := fetched(get(), len(ids)-1); n*4 >= int64(loc.Length)*3 {
			t.Errorf("%s: the last member fetched %d bytes of a %d-byte record", name, n, loc.Length)
		}
	}
	r := s.ReadSession()
	fetched(r.Get, len(ids)-2)
	if n := fetched(r.Get, len(ids)-1); n != 0 {
		t.Errorf("a session's second read of one frame fetched %d bytes", n)
	}
}

// A member of a group stored raw (by a deferred save) is fetched in
// rawFrameLen pieces: one of 8 KiB in a group of 120 costs the header, the
// table and a piece or two, under a twentieth of the record.
func TestARawMemberReadFetchesOnlyItsPieces(t *testing.T) {
	var reads, read atomic.Int64
	s, idx := testStore(t, Options{Groups: true, FS: countingFS{FS: storefs.OS, reads: &reads, bytes: &read}})
	b := s.NewBatch()
	b.DeferCompression()
	var blobs [][]byte
	var ids []ID
	for i := range 120 {
		blobs = append(blobs, textBytes(uint64(i), 8<<10))
		id, err := b.PutBytes(blobs[i])
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	placed, err := b.Sync()
	b.Close()
	if err != nil {
		t.Fatal(err)
	}
	idx.commit(placed)
	loc, _ := s.Stat(ids[60])
	if loc.Flags&pack.FlagGroup == 0 || loc.Flags&pack.FlagCompressed != 0 {
		t.Fatalf("a deferred save stored blob 60 as %+v, want a raw group member", loc)
	}
	read.Store(0)
	if got, err := s.Get(ids[60]); err != nil || !bytes.Equal(got, blobs[60]) {
		t.Fatalf("member 60: %v", err)
	}
	if n := read.Load(); n*20 >= int64(loc.Length) {
		t.Fatalf("a member of 8 KiB fetched %d bytes of a %d-byte raw group", n, loc.Length)
	}
}

// A group is stored as zstd frames of about groupFrameLen decoded bytes
// each, every one decodable alone: with a middle frame damaged, the
// members of the frames around it still read, verified, through the store
// and a session, and only a member of the damaged frame is corrupt.
func TestGroupFramesDecodeAlone(t *testing.T) {
	s, blobs, ids, loc, frames := fourFrameGroup(t, storefs.OS)
	for i, f := range frames[:3] {
		if f.size != groupFrameLen {
			t.Fatalf("frame %d decodes to %d bytes, want %d", i, f.size, groupFrameLen)
		}
	}
	var fh zstd.Header
	if err := fh.Decode(frames[1].src); err != nil {
		t.Fatal(err)
	}
	block := len(frames[0].src) + fh.HeaderSize // the first block of the second frame
	patchByte(t, s.PackPath(loc.Pack), loc.Offset+int64(pack.RecordHeaderLen+block), func(b byte) byte { return b | 0b110 })

	damaged := func(i int) bool {
		start := int64(pack.GroupHeadLen + len(ids)*pack.GroupEntryLen + i*(60<<10))
		return start < frames[1].start+frames[1].size && start+60<<10 > frames[1].start
	}
	for i, id := range ids {
		got, err := s.Get(id)
		sgot, serr := s.ReadSession().Get(id)
		if damaged(i) {
			mustCorrupt(t, err)
			mustCorrupt(t, serr)
			continue
		}
		if err != nil || serr != nil || !bytes.Equal(got, blobs[i]) || !bytes.Equal(sgot, blobs[i]) {
			t.Fatalf("member %d, outside the damaged frame: %v, %v", i, err, serr)
		}
	}
}
