package objects

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/ckpt/ckpt/internal/storefs"
	"github.com/ckpt/ckpt/objects/internal/pack"
)

// edited returns v with one line inserted at a position that moves with
// k: the one-line edit of a source file.
func edited(v []byte, k int) []byte {
	at := bytes.IndexByte(v[(k*7919)%(len(v)-1):], '\n')
	if at < 0 {
		at = len(v) - 1
	} else {
		at += (k * 7919) % (len(v) - 1)
	}
	line := fmt.Sprintf("\tedit %d: return fmt.Errorf(\"line %d\")\n", k, k)
	return append(append(append([]byte{}, v[:at+1]...), line...), v[at+1:]...)
}

// saveVersion stores data as a new version of prev in one batch and
// commits it, returning its id and locator.
func saveVersion(t testing.TB, s *Store, idx *mapIndex, data []byte, prev ID) (ID, Locator) {
	t.Helper()
	b := s.NewBatch()
	defer b.Close()
	id, n, err := b.PutVersion(bytes.NewReader(data), prev)
	if err != nil || n != int64(len(data)) || id != Sum(data) {
		t.Fatalf("PutVersion = %s, %d, %v; want %s, %d", id.Short(), n, err, Sum(data).Short(), len(data))
	}
	ps, err := b.Sync()
	if err != nil {
		t.Fatal(err)
	}
	idx.commit(ps)
	loc, err := s.Stat(id)
	if err != nil {
		t.Fatal(err)
	}
	return id, loc
}

// depthOf returns the delta depth of blob id as a read finds it.
func depthOf(t testing.TB, s *Store, id ID) int {
	t.Helper()
	loc, err := s.Stat(id)
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := s.readRecord(loc, id)
	if err != nil {
		t.Fatal(err)
	}
	return h.depth
}

// A one-line edit of a text file is stored as a small delta record that
// reads back byte-exact through Get, Open and a read session, its base
// grouped or not, up to the largest content a delta takes.
func TestDeltaRoundTrip(t *testing.T) {
	for _, groups := range []bool{false, true} {
		t.Run(fmt.Sprintf("groups=%v", groups), func(t *testing.T) {
			s, idx := testStore(t, Options{Groups: groups})
			sizes := []int{deltaMin, 20 << 10}
			if !groups { // the largest once: a delta record is never grouped
				sizes = append(sizes, deltaMax-200)
			}
			for _, size := range sizes {
				v := textBytes(uint64(size), size)
				prev, _ := saveVersion(t, s, idx, v, ID{})
				for k := range 3 {
					v = edited(v, k)
					if len(v) > deltaMax {
						v = v[:deltaMax]
					}
					id, loc := saveVersion(t, s, idx, v, prev)
					if limit := max(300, len(v)/256); !loc.Delta() || int(loc.Length) > limit {
						t.Fatalf("size %d, version %d: locator %+v, want a delta record of at most %d bytes", size, k, loc, limit)
					}
					mustGet(t, s, id, v)
					if got, err := s.ReadSession().Get(id); err != nil || !bytes.Equal(got, v) {
						t.Fatalf("session read: %d bytes, %v", len(got), err)
					}
					prev = id
				}
			}
		})
	}
}

// What a delta does not pay for is stored whole: content unlike its
// previous version, content too small, a previous version that is not
// stored or is chunked, and everything a deferred batch stores.
func TestDeltaOnlyWhenItPays(t *testing.T) {
	s, idx := testStore(t, Options{Groups: true, ChunkThreshold: 256 << 10})
	text := textBytes(1, 16<<10)
	base, _ := saveVersion(t, s, idx, text, ID{})
	big, loc := saveVersion(t, s, idx, textBytes(2, 2<<20), ID{})
	if !loc.Chunked() {
		t.Fatal("the large file was not chunked")
	}
	cases := map[string]struct {
		data []byte
		prev ID
	}{
		"unlike":   {randomBytes(3, 16<<10), base},
		"small":    {edited(text[:300], 1), Sum(text[:300])},
		"unstored": {edited(text, 2), Sum([]byte("never stored"))},
		"chunked":  {textBytes(2, 200<<10), big},
	}
	for name, c := range cases {
		if _, loc := saveVersion(t, s, idx, c.data, c.prev); loc.Delta() {
			t.Errorf("%s: stored as a delta", name)
		}
	}
	b := s.NewBatch()
	defer b.Close()
	b.DeferCompression()
	id, _, err := b.PutVersion(bytes.NewReader(edited(text, 3)), base)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := b.Sync()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.ID == id && p.Loc.Delta() {
			t.Error("a deferred batch stored a delta")
		}
	}
}

// countingFS counts the reads of pack files.
// countingFS counts the reads of the files it opens, and, when bytes is
// set, the bytes they read.
type countingFS struct {
	vfs.FS
	reads *atomic.Int64
	bytes *atomic.Int64
}

func (c countingFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := c.FS.Open(name, opts...)
	if err != nil {
		return nil, err
	}
	return countingFile{f, c}, nil
}

type countingFile struct {
	vfs.File
	c countingFS
}

func (c countingFile) ReadAt(p []byte, off int64) (int, error) {
	c.c.reads.Add(1)
	if c.c.bytes != nil {
		c.c.bytes.Add(int64(len(p)))
	}
	return c.File.ReadAt(p, off)
}

// A chain of versions never grows past MaxDeltaDepth: the version after
// it is stored whole and starts a new chain, and reading a version of
// depth N loads at most N+1 records.
func TestDeltaChainBound(t *testing.T) {
	var reads atomic.Int64
	s, idx := testStore(t, Options{Groups: true, FS: countingFS{FS: storefs.OS, reads: &reads}})
	v := textBytes(7, 8<<10)
	prev, _ := saveVersion(t, s, idx, v, ID{})
	versions := map[ID][]byte{prev: v}
	depths := []int{0}
	for k := range 2*pack.MaxDeltaDepth + 3 {
		v = edited(v, k)
		prev, _ = saveVersion(t, s, idx, v, prev)
		versions[prev] = v
		depths = append(depths, depthOf(t, s, prev))
	}
	for i, d := range depths {
		if want := i % (pack.MaxDeltaDepth + 1); d != want {
			t.Fatalf("version %d has depth %d, want %d (depths %v)", i, d, want, depths)
		}
	}
	for id, want := range versions {
		depth := depthOf(t, s, id)
		reads.Store(0)
		mustGet(t, s, id, want) // Get, then Open: two reads of the chain
		if n := reads.Load(); n > 2*int64(depth+1) {
			t.Errorf("reading a version of depth %d twice read %d records, want at most %d", depth, n, 2*(depth+1))
		}
	}
}

// deltaPair stores a base and a delta of it, ungrouped, and returns both.
func deltaPair(t *testing.T) (s *Store, idx *mapIndex, base, delta ID, v1 []byte) {
	s, idx = testStore(t, Options{})
	v0 := textBytes(11, 12<<10)
	base, _ = saveVersion(t, s, idx, v0, ID{})
	v1 = edited(v0, 1)
	delta, loc := saveVersion(t, s, idx, v1, base)
	if !loc.Delta() {
		t.Fatal("the edit was not stored as a delta")
	}
	return s, idx, base, delta, v1
}

// Damage to a delta's base, to its frame or to its depth, and a missing
// base, fail the delta's read with the corruption mark: never wrong bytes.
// A session reads the version the store keeps from the delta's encoding,
// as long as it keeps it.
func TestDeltaCorruptionDetected(t *testing.T) {
	payloadAt := func(s *Store, id ID, k int64) int64 {
		loc, err := s.Stat(id)
		if err != nil {
			t.Fatal(err)
		}
		return loc.Offset + pack.RecordHeaderLen + k
	}
	damage := map[string]func(s *Store, idx *mapIndex, base, delta ID){
		"base": func(s *Store, _ *mapIndex, base, _ ID) {
			loc, _ := s.Stat(base)
			flip(t, s.PackPath(loc.Pack), payloadAt(s, base, loc.PayloadLen()/2))
		},
		"frame": func(s *Store, _ *mapIndex, _, delta ID) {
			loc, _ := s.Stat(delta)
			flip(t, s.PackPath(loc.Pack), payloadAt(s, delta, loc.PayloadLen()-3))
		},
		"depth": func(s *Store, _ *mapIndex, _, delta ID) {
			loc, _ := s.Stat(delta)
			patchByte(t, s.PackPath(loc.Pack), payloadAt(s, delta, IDSize), func(byte) byte { return pack.MaxDeltaDepth + 1 })
		},
		"base id": func(s *Store, _ *mapIndex, _, delta ID) {
			loc, _ := s.Stat(delta)
			flip(t, s.PackPath(loc.Pack), payloadAt(s, delta, 3))
		},
		"missing base": func(_ *Store, idx *mapIndex, base, _ ID) {
			idx.mu.Lock()
			delete(idx.locs, base)
			idx.mu.Unlock()
		},
	}
	for name, hurt := range damage {
		t.Run(name, func(t *testing.T) {
			s, idx, base, delta, v1 := deltaPair(t)
			hurt(s, idx, base, delta)
			got, err := s.Get(delta)
			mustCorrupt(t, err)
			if got != nil {
				t.Fatalf("Get returned %d bytes with the error", len(got))
			}
			// A session takes the version the store keeps in memory since
			// it encoded the delta, verified again: the right bytes.
			if got, err := s.ReadSession().Get(delta); err != nil || !bytes.Equal(got, v1) {
				t.Fatalf("session read of the kept version: %d bytes, %v; want the edit's %d", len(got), err, len(v1))
			}
			s.recent = newMemo[ID](recentEntries, recentBytes) // as a store opened afresh
			if _, err := s.ReadSession().Get(delta); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("session read: %v, want ErrCorrupt", err)
			}
		})
	}
}

// A delta moved by a collection, copied or recompressed whole, and its base
// moved too, still read back; a delta taken out of the store stands alone
// as WholeRecord gives it, and a delta record itself is refused there.
func TestDeltaRewriteAndWholeRecord(t *testing.T) {
	s, idx, base, delta, v1 := deltaPair(t)
	baseLoc, _ := s.Stat(base)
	deltaLoc, _ := s.Stat(delta)
	ps, err := s.Rewrite(context.Background(), []Move{{ID: base, Loc: baseLoc, How: MoveCopy}, {ID: delta, Loc: deltaLoc, How: MoveCopy}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	idx.commit(ps)
	mustGet(t, s, delta, v1)
	if loc, _ := s.Stat(delta); !loc.Delta() {
		t.Fatal("a copied delta is no longer a delta")
	}

	rec, whole, err := s.WholeRecord(delta, deltaLoc)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.DecodeRecord(rec, []Placement{{ID: delta, Loc: whole}})
	if err != nil || !bytes.Equal(got[0], v1) || whole.Delta() {
		t.Fatalf("whole record: locator %+v, %d bytes, %v", whole, len(got), err)
	}
	loc, _ := s.Stat(delta)
	raw, err := s.rawRecord(loc)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.DecodeRecord(raw, []Placement{{ID: delta, Loc: loc}})
	mustCorrupt(t, err)

	ps, err = s.Rewrite(context.Background(), []Move{{ID: delta, Loc: loc, How: MoveRecompress}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	idx.commit(ps)
	if loc, _ := s.Stat(delta); loc.Delta() {
		t.Fatal("a recompressed delta is still a delta")
	}
	mustGet(t, s, delta, v1)
	next := edited(v1, 2)
	id, _ := saveVersion(t, s, idx, next, delta)
	if d := depthOf(t, s, id); d != 1 {
		t.Fatalf("a delta of a recompressed blob has depth %d, want 1", d)
	}
	mustGet(t, s, id, next)
}

// A delta reaches every byte of its base, however far back, for the
// largest base and content a delta takes, and its encoder's first use
// reserves memory for that span, not for zstd's default window of 8 MiB.
func TestDeltaWindowSpansBaseAndContent(t *testing.T) {
	c, err := newCodec(1)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(11, 11))
	base := make([]byte, deltaMax)
	for i := range base {
		base[i] = byte(rng.Uint32())
	}
	// The content's second half repeats the base's first half: its
	// matches lie a base and a half back.
	content := append(slices.Clone(base[deltaMax/2:]), base[:deltaMax/2]...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	frame, err := c.deltaEncode(nil, content, base)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	// Random bytes do not compress: without the base's first half in
	// reach, the delta would hold the content's second half, half of it.
	if len(frame)*3 > len(content) {
		t.Fatalf("a delta of %d bytes for a rotation of its base of %d", len(frame), len(base))
	}
	if got, err := c.deltaDecode(frame, base, int64(len(content))); err != nil || !bytes.Equal(got, content) {
		t.Fatalf("the delta does not decode to its content: %v", err)
	}
	// The history, the match tables and the output: 5.5 MB here, 11.8 MB
	// with the default window.
	if n := after.TotalAlloc - before.TotalAlloc; n > 4*deltaWindow {
		t.Fatalf("the first delta allocated %d bytes, over four times the window of %d", n, deltaWindow)
	}
}
