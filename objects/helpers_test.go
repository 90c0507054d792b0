package objects

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
)

// mapIndex is an in-memory LocatorIndex for tests.
type mapIndex struct {
	mu   sync.RWMutex
	locs map[ID]Locator
}

func newMapIndex() *mapIndex { return &mapIndex{locs: make(map[ID]Locator)} }

func (m *mapIndex) Locator(id ID) (Locator, bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	loc, ok := m.locs[id]
	return loc, ok, nil
}

func (m *mapIndex) commit(ps []Placement) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range ps {
		m.locs[p.ID] = p.Loc
	}
}

func (m *mapIndex) set(id ID, loc Locator) { m.commit([]Placement{{id, loc}}) }

// testStore opens a store in a fresh temporary directory.
func testStore(t testing.TB, opts Options) (*Store, *mapIndex) {
	t.Helper()
	idx := newMapIndex()
	s, err := Open(t.TempDir(), idx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, idx
}

// save stores every blob in one batch, syncs, commits, and returns the ids
// and the placements written.
func save(t testing.TB, s *Store, idx *mapIndex, blobs ...[]byte) ([]ID, []Placement) {
	t.Helper()
	b := s.NewBatch()
	defer b.Close()
	ids := make([]ID, len(blobs))
	for i, data := range blobs {
		id, n, err := b.Put(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if n != int64(len(data)) || id != Sum(data) {
			t.Fatalf("Put returned (%s, %d), want (%s, %d)", id.Short(), n, Sum(data).Short(), len(data))
		}
		ids[i] = id
	}
	ps, err := b.Sync()
	if err != nil {
		t.Fatal(err)
	}
	idx.commit(ps)
	return ids, ps
}

// mustGet checks Get and Open both return want for id.
func mustGet(t testing.TB, s *Store, id ID, want []byte) {
	t.Helper()
	got, err := s.Get(id)
	if err != nil {
		t.Fatalf("Get %s: %v", id.Short(), err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Get %s: got %d bytes, want %d (content differs)", id.Short(), len(got), len(want))
	}
	rc, size, err := s.Open(id)
	if err != nil {
		t.Fatalf("Open %s: %v", id.Short(), err)
	}
	defer rc.Close()
	if size != int64(len(want)) {
		t.Fatalf("Open %s: size %d, want %d", id.Short(), size, len(want))
	}
	// Read into room for all of it: io.ReadAll's growing copies were a
	// quarter of the CPU of the large round trips under the race detector.
	buf := bytes.NewBuffer(make([]byte, 0, len(want)+bytes.MinRead))
	_, err = buf.ReadFrom(rc)
	if got = buf.Bytes(); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("Open %s: read %d bytes, err %v; want %d bytes", id.Short(), len(got), err, len(want))
	}
}

// mustCorrupt checks that err is a *CorruptError matching ErrCorrupt.
func mustCorrupt(t testing.TB, err error) {
	t.Helper()
	var ce *CorruptError
	if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) {
		t.Fatalf("got %v, want a *CorruptError", err)
	}
}

func randomBytes(seed uint64, n int) []byte {
	r := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16)})
	b := make([]byte, n)
	r.Read(b)
	return b
}

// textGen is a cheap deterministic generator of text-like, compressible,
// non-periodic bytes: words from a small vocabulary picked by a PCG.
type textGen struct {
	rng  *rand.PCG
	left int64
	line []byte // unread part of buf
	buf  []byte
}

var vocabulary = []string{
	"func", "return", "err", "nil", "if", "for", "range", "package", "import", "the", "store",
	"pack", "blob", "chunk", "index", "{", "}", "(", ")", "tree", "save", "restore", "diff",
	"workspace", "checkpoint", ":=", "=", "int64", "string", "[]byte", "context", "error",
}

func newTextGen(seed uint64, size int64) *textGen {
	return &textGen{rng: rand.NewPCG(seed, 0x636b7074), left: size}
}

func (g *textGen) Read(p []byte) (int, error) {
	if g.left == 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), g.left)]
	n := 0
	for n < len(p) {
		if len(g.line) == 0 {
			g.buf = g.fill(g.buf[:0])
			g.line = g.buf
		}
		c := copy(p[n:], g.line)
		g.line = g.line[c:]
		n += c
	}
	g.left -= int64(n)
	return n, nil
}

// fill appends one line of 8 to 15 words.
func (g *textGen) fill(b []byte) []byte {
	v := g.rng.Uint64()
	b = append(b, "\t\t"[:v&1+1]...)
	for range 8 + int(v>>60&7) {
		b = append(b, vocabulary[g.rng.Uint64()%uint64(len(vocabulary))]...)
		b = append(b, ' ')
	}
	return append(b, '\n')
}

var textBlock = sync.OnceValue(func() []byte {
	b, _ := io.ReadAll(newTextGen(1, 1<<20))
	return b
})

// textBytes returns n bytes of text-like content that differ by seed:
// slices of one generated block with the seed and offset stamped every
// 4 KiB, cheap to build even under the race detector.
func textBytes(seed uint64, n int) []byte {
	block := textBlock()
	b := make([]byte, n)
	for off := 0; off < n; off += 4096 {
		start := int((seed*7919 + uint64(off)) % uint64(len(block)-4096))
		copy(b[off:min(n, off+4096)], block[start:])
		copy(b[off:min(n, off+4096)], fmt.Sprintf("%d@%d;", seed, off))
	}
	return b
}
