package objects

import (
	"os"
	"sync/atomic"
	"testing"

	"github.com/ckpt/ckpt/objects/internal/pack"
)

// FuzzParseLocator checks that ParseLocator never panics, rejects with
// ErrCorrupt, and round-trips what it accepts.
func FuzzParseLocator(f *testing.F) {
	f.Add(Locator{Pack: 3, Offset: 12, Length: 90, Flags: pack.FlagCompressed, Size: 200}.AppendBinary(nil))
	f.Add([]byte{1, 0, 0, 0, 0, 0})
	f.Add(Locator{Pack: 1, Offset: 12, Length: 900, Flags: pack.FlagGroup | pack.FlagCompressed, Size: 20, Member: 7}.AppendBinary(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := ParseLocator(b)
		if err != nil {
			mustCorrupt(t, err)
			return
		}
		if string(l.AppendBinary(nil)) != string(b) {
			t.Fatalf("%x parses to %+v which encodes differently", b, l)
		}
	})
}

// seedPack builds a small well-formed pack: a raw record, a compressed
// one, a chunk list (whose chunks the fuzz store does not hold) and a
// compressed group of three blobs.
func seedPack(t testing.TB) []byte {
	c, err := newCodec(0)
	if err != nil {
		t.Fatal(err)
	}
	packData := packHeader()
	add := func(id ID, size int64, flags Flags, payload []byte) {
		packData = appendRecordHeader(packData, recordHeader{flags: flags, id: id, size: size, payloadLen: uint32(len(payload))})
		packData = append(packData, payload...)
	}
	raw := []byte("raw content")
	add(Sum(raw), int64(len(raw)), 0, raw)
	text := textBytes(1, 2000)
	z, flags, err := c.compress(nil, text, true)
	if err != nil || flags != pack.FlagCompressed {
		t.Fatalf("seed text did not compress: %v", err)
	}
	add(Sum(text), int64(len(text)), flags, z)
	add(Sum([]byte("abc")), 3, pack.FlagChunked, appendChunkList(nil, []chunkRef{{Sum([]byte("a")), 1}, {Sum([]byte("bc")), 2}}))
	g := &group{}
	for i := range 3 {
		m := textBytes(uint64(i+2), 300)
		g.ids, g.sizes, g.data = append(g.ids, Sum(m)), append(g.sizes, uint32(len(m))), append(g.data, m...)
	}
	raw = g.payload(nil)
	z, flags, err = c.compress(nil, raw, false)
	if err != nil || flags != pack.FlagCompressed {
		t.Fatalf("seed group did not compress: %v", err)
	}
	add(Sum(raw), int64(len(raw)), pack.FlagGroup|flags, z)
	return packData
}

// FuzzScanPack writes arbitrary bytes as a pack, scans it, and reads back
// every record found (member 0 of a group): nothing may panic, every
// failure is a corruption, and every plain payload returned hashes to its
// id.
func FuzzScanPack(f *testing.F) {
	packData := seedPack(f)
	f.Add(packData)
	f.Add(packData[:len(packData)-5])
	f.Add(packHeader())
	s, _ := testStore(f, Options{})
	var next atomic.Uint32
	f.Fuzz(func(t *testing.T, packData []byte) {
		n := next.Add(1)
		path := s.PackPath(n)
		if err := os.WriteFile(path, packData, 0o600); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(path)
		err := s.ScanPack(n, func(id ID, loc Locator) error {
			if loc.Flags&pack.FlagGroup != 0 {
				loc.Size = groupMemberSize(t, s, loc)
			}
			data, err := s.ReadRecord(loc)
			if err != nil {
				mustCorrupt(t, err)
				return nil
			}
			if loc.Flags&(pack.FlagChunked|pack.FlagGroup) == 0 && Sum(data) != id {
				t.Fatalf("record %+v returned bytes that do not hash to %s", loc, id.Short())
			}
			return nil
		})
		if err != nil {
			mustCorrupt(t, err)
		}
	})
}

// groupMemberSize returns the length of member 0 of the group record at loc
// as its table says, or -1 when the group cannot be decoded (a locator
// with that size reads as corrupt).
func groupMemberSize(t *testing.T, s *Store, loc Locator) int64 {
	raw, err := s.rawRecord(loc)
	if err != nil {
		return -1
	}
	p := raw[pack.RecordHeaderLen:]
	if loc.Flags&pack.FlagCompressed != 0 {
		if p, err = s.codec.decompress(p, loc.Size); err != nil {
			return -1
		}
	}
	_, start, end, err := memberSpan(p, loc.Size, 0)
	if err != nil {
		return -1
	}
	return end - start
}
