package objects

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ckpt/ckpt/objects/internal/pack"
)

// corruptFixture saves a compressed blob, a raw blob and a chunked file,
// each blob in a record of its own, and returns their contents by id.
func corruptFixture(t *testing.T) (*Store, *mapIndex, map[ID][]byte) {
	s, idx := testStore(t, Options{ChunkThreshold: 1 << 20})
	blobs := [][]byte{textBytes(1, 200<<10), randomBytes(2, 50<<10), randomBytes(3, 3<<20)}
	ids, _ := save(t, s, idx, blobs...)
	m := map[ID][]byte{}
	for i, id := range ids {
		m[id] = blobs[i]
	}
	return s, idx, m
}

// checkNeverWrong reads every blob and requires either the right bytes or a
// corruption error, and at least one corruption error.
func checkNeverWrong(t *testing.T, s *Store, blobs map[ID][]byte) {
	t.Helper()
	corrupt := 0
	for id, want := range blobs {
		got, err := s.Get(id)
		if err != nil {
			mustCorrupt(t, err)
			corrupt++
			continue
		}
		if string(got) != string(want) {
			t.Fatalf("Get %s returned wrong bytes", id.Short())
		}
	}
	if corrupt == 0 {
		t.Fatal("damage went unnoticed")
	}
}

func TestCorruptFlippedByte(t *testing.T) {
	s, idx, blobs := corruptFixture(t)
	// Flip one byte in every record, at a spot in the header or the payload.
	for _, spot := range []int64{0, 4, 10, 40, 46, 50, pack.RecordHeaderLen, pack.RecordHeaderLen + 100} {
		for id := range blobs {
			loc, _, _ := idx.Locator(id)
			flip(t, s.PackPath(loc.Pack), loc.Offset+spot)
			_, err := s.Get(id)
			mustCorrupt(t, err)
			flip(t, s.PackPath(loc.Pack), loc.Offset+spot)
			mustGet(t, s, id, blobs[id])
		}
	}
}

func flip(t *testing.T, path string, off int64) {
	t.Helper()
	patchByte(t, path, off, func(b byte) byte { return b ^ 0x5a })
}

// patchByte replaces the byte at off in the file at path with patch of it.
func patchByte(t *testing.T, path string, off int64, patch func(byte) byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] = patch(b[0])
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func TestCorruptChunkFlipped(t *testing.T) {
	s, idx, blobs := corruptFixture(t)
	for id, data := range blobs {
		if len(data) < 1<<20 {
			continue
		}
		chunks, err := s.ChunkList(id)
		if err != nil {
			t.Fatal(err)
		}
		loc, _, _ := idx.Locator(chunks[len(chunks)/2])
		flip(t, s.PackPath(loc.Pack), loc.Offset+pack.RecordHeaderLen+10)
		rc, _, err := s.Open(id)
		if err != nil {
			t.Fatal(err)
		}
		_, err = readAllChecked(rc, data)
		mustCorrupt(t, err)
	}
}

// readAllChecked reads r to the end and fails on bytes differing from want.
func readAllChecked(r interface{ Read([]byte) (int, error) }, want []byte) (int, error) {
	buf := make([]byte, 64<<10)
	off := 0
	for {
		n, err := r.Read(buf)
		if string(buf[:n]) != string(want[off:off+n]) {
			return off, errors.New("wrong bytes returned")
		}
		off += n
		if err != nil {
			return off, err
		}
	}
}

func TestCorruptTruncatedPack(t *testing.T) {
	s, _, blobs := corruptFixture(t)
	packs, _ := s.Packs()
	fi, _ := os.Stat(s.PackPath(packs[0]))
	if err := os.Truncate(s.PackPath(packs[0]), fi.Size()-1000); err != nil {
		t.Fatal(err)
	}
	checkNeverWrong(t, s, blobs)
}

func TestCorruptMissingPack(t *testing.T) {
	s, _, blobs := corruptFixture(t)
	packs, _ := s.Packs()
	if err := os.Remove(s.PackPath(packs[0])); err != nil {
		t.Fatal(err)
	}
	checkNeverWrong(t, s, blobs)
	if err := s.ScanPack(packs[0], func(ID, Locator) error { return nil }); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("ScanPack of a missing pack: %v", err)
	}
}

func TestCorruptGarbageLocator(t *testing.T) {
	s, idx, blobs := corruptFixture(t)
	var id ID
	var loc Locator
	for id = range blobs {
		if loc, _, _ = idx.Locator(id); loc.Flags == pack.FlagCompressed {
			break
		}
	}
	packEnd := packBytes(t, s)
	bad := []Locator{
		{Pack: loc.Pack, Offset: packEnd + 10, Length: loc.Length, Flags: loc.Flags, Size: loc.Size},
		{Pack: loc.Pack, Offset: packEnd - 20, Length: loc.Length, Flags: loc.Flags, Size: loc.Size},
		{Pack: loc.Pack, Offset: loc.Offset, Length: loc.Length - 1, Flags: loc.Flags, Size: loc.Size},
		{Pack: loc.Pack, Offset: loc.Offset, Length: 1<<32 - 1, Flags: loc.Flags, Size: loc.Size},
		{Pack: loc.Pack, Offset: loc.Offset + 1, Length: loc.Length, Flags: loc.Flags, Size: loc.Size},
		{Pack: loc.Pack, Offset: loc.Offset, Length: loc.Length, Flags: 0, Size: loc.Size},
		{Pack: loc.Pack, Offset: loc.Offset, Length: loc.Length, Flags: loc.Flags, Size: loc.Size + 1},
		{Pack: loc.Pack, Offset: loc.Offset, Length: loc.Length, Flags: pack.FlagChunked, Size: loc.Size},
		{Pack: loc.Pack + 7, Offset: loc.Offset, Length: loc.Length, Flags: loc.Flags, Size: loc.Size},
		{Pack: loc.Pack, Offset: 0, Length: loc.Length, Flags: loc.Flags, Size: loc.Size},
		{Pack: loc.Pack, Offset: loc.Offset, Length: loc.Length, Flags: loc.Flags, Size: -1},
	}
	for i, l := range bad {
		idx.set(id, l)
		if _, err := s.Get(id); !errors.Is(err, ErrCorrupt) {
			t.Errorf("locator %d %+v: %v", i, l, err)
		}
		_, err := s.ReadRecord(l)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("ReadRecord %d: %v", i, err)
		}
	}
	// A locator of another blob's record is caught by the id check.
	for other := range blobs {
		if other != id {
			l, _, _ := idx.Locator(other)
			idx.set(id, l)
			_, err := s.Get(id)
			mustCorrupt(t, err)
			break
		}
	}
}

func TestCorruptChunkMissingFromIndex(t *testing.T) {
	s, idx, blobs := corruptFixture(t)
	for id, data := range blobs {
		if len(data) < 1<<20 {
			continue
		}
		chunks, _ := s.ChunkList(id)
		idx.mu.Lock()
		delete(idx.locs, chunks[0])
		idx.mu.Unlock()
		_, err := s.Get(id)
		mustCorrupt(t, err)
	}
}

func TestScanPackGarbage(t *testing.T) {
	s, _, blobs := corruptFixture(t)
	packs, _ := s.Packs()
	path := s.PackPath(packs[0])
	count := func() (int, error) {
		n := 0
		err := s.ScanPack(packs[0], func(ID, Locator) error { n++; return nil })
		return n, err
	}
	want := 0
	for _, d := range blobs {
		want++
		if len(d) > 1<<20 {
			ids, _ := s.ChunkList(Sum(d))
			want += len(ids)
		}
	}
	if n, err := count(); err != nil || n != want {
		t.Fatalf("clean pack: %d records, %v; want %d", n, err, want)
	}
	// A torn tail: half a record header, or zeros, is not an error.
	for _, tail := range [][]byte{[]byte(pack.RecordMagic + "\x00\x01"), make([]byte, 300)} {
		appendFile(t, path, tail)
		if n, err := count(); err != nil || n != want {
			t.Fatalf("torn tail %q: %d records, %v", tail[:4], n, err)
		}
		fi, _ := os.Stat(path)
		os.Truncate(path, fi.Size()-int64(len(tail)))
	}
	// Garbage in the middle is.
	flip(t, path, int64(pack.HeaderLen)+2)
	_, err := count()
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Offset != int64(pack.HeaderLen) {
		t.Fatalf("garbage at %d: %v", pack.HeaderLen, err)
	}
}

func appendFile(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

// TestResumeAfterTornTail appends to a pack whose tail a crash tore: the
// tail is cut off and every record stays readable.
func TestResumeAfterTornTail(t *testing.T) {
	s, idx, blobs := corruptFixture(t)
	packs, _ := s.Packs()
	appendFile(t, s.PackPath(packs[0]), []byte(pack.RecordMagic+"torn"))
	s2, err := Open(filepathDir(s), idx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	more := textBytes(11, 5000)
	ids, ps := save(t, s2, idx, more)
	if ps[0].Loc.Pack != packs[0] {
		t.Fatalf("resumed into pack %d, want %d", ps[0].Loc.Pack, packs[0])
	}
	mustGet(t, s2, ids[0], more)
	for id, d := range blobs {
		mustGet(t, s2, id, d)
	}
	if err := s2.ScanPack(packs[0], func(ID, Locator) error { return nil }); err != nil {
		t.Fatal(err)
	}
}

// TestDamagedPackHeaderIsCorrupt flips one byte of a pack's header magic:
// the records behind it still verify on their own, but a read through the
// pack must report the damage instead of trusting it.
func TestDamagedPackHeaderIsCorrupt(t *testing.T) {
	for _, off := range []int64{0, 3, int64(len(pack.Magic)) - 1, int64(pack.HeaderLen) - 1} {
		s, idx := testStore(t, Options{})
		data := textBytes(7, 4000)
		ids, ps := save(t, s, idx, data)
		path := s.PackPath(ps[0].Loc.Pack)
		flip(t, path, off)
		s.Close()
		s2, err := Open(filepath.Dir(filepath.Dir(path)), idx, Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s2.Get(ids[0])
		mustCorrupt(t, err)
		var ce *CorruptError
		if errors.As(err, &ce); ce.Pack != path || ce.Offset != 0 || ce.Reason != "bad pack header" {
			t.Fatalf("header byte %d: %+v", off, ce)
		}
		if err := s2.ScanPack(ps[0].Loc.Pack, func(ID, Locator) error { return nil }); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("header byte %d: ScanPack = %v", off, err)
		}
		s2.Close()
	}
}
