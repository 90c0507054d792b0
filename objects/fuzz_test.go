package objects

import (
	"os"
	"testing"
)

// FuzzParseLocator checks that ParseLocator never panics, rejects with
// ErrCorrupt, and round-trips what it accepts.
func FuzzParseLocator(f *testing.F) {
	f.Add(Locator{Pack: 3, Offset: 12, Length: 90, Flags: FlagCompressed, Size: 200}.AppendBinary(nil))
	f.Add([]byte{1, 0, 0, 0, 0, 0})
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

// FuzzScanPack writes arbitrary bytes as a pack, scans it, and reads back
// every record found: nothing may panic, every failure is a corruption,
// and every plain payload returned hashes to its id.
func FuzzScanPack(f *testing.F) {
	s, idx := testStore(f, Options{ChunkThreshold: 1})
	save(f, s, idx, textBytes(1, 3000), randomBytes(2, 100), []byte("x"), make([]byte, chunkMax+10))
	packs, _ := s.Packs()
	seed, err := os.ReadFile(s.PackPath(packs[0]))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add(packHeader())
	f.Fuzz(func(t *testing.T, pack []byte) {
		s, _ := testStore(t, Options{})
		if err := os.WriteFile(s.PackPath(0), pack, 0o600); err != nil {
			t.Fatal(err)
		}
		err := s.ScanPack(0, func(id ID, loc Locator) error {
			data, err := s.ReadRecord(loc)
			if err != nil {
				mustCorrupt(t, err)
				return nil
			}
			if loc.Flags&FlagChunked == 0 && Sum(data) != id {
				t.Fatalf("record %+v returned bytes that do not hash to %s", loc, id.Short())
			}
			return nil
		})
		if err != nil {
			mustCorrupt(t, err)
		}
	})
}
