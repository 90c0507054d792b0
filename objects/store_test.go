package objects

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/ckpt/ckpt/internal/testbound"
	"github.com/ckpt/ckpt/objects/internal/pack"
)

// TestRoundTripSizes stores blobs of the lengths around each buffer the
// batch reads into, the chunk threshold (the batch's last buffer: 4 MiB
// with the long tests, 2 MiB without) and the chunk minimum, and with the
// long tests around the chunk maximum too (TestChunkBoundarySizes cuts
// those lengths either way).
func TestRoundTripSizes(t *testing.T) {
	thr := testbound.Scale(2<<20, 4<<20)
	sizes := []int{0, 1, 63, 64, 65, 4095, headBufLen - 1, headBufLen, headBufLen + 1, midBufLen - 1, midBufLen, midBufLen + 1,
		chunkMin - 1, chunkMin, chunkMin + 1, thr - 1, thr, thr + 1, thr + chunkMin - 1, thr + chunkMin + 1}
	if testbound.LongTests() {
		sizes = append(sizes, chunkMax-1, chunkMax, chunkMax+1, 2*chunkMax-1, 2*chunkMax+1)
	}
	s, idx := testStore(t, Options{ChunkThreshold: int64(thr)})
	for _, n := range sizes {
		for _, kind := range []string{"text", "random"} {
			if kind == "text" && n > thr+1 {
				continue // large incompressible data is the slower, stricter case
			}
			t.Run(fmt.Sprintf("%s/%d", kind, n), func(t *testing.T) {
				data := textBytes(uint64(n), n)
				if kind == "random" {
					data = randomBytes(uint64(n), n)
				}
				ids, _ := save(t, s, idx, data)
				mustGet(t, s, ids[0], data)
				loc, err := s.Stat(ids[0])
				if err != nil {
					t.Fatal(err)
				}
				if loc.Size != int64(n) || (loc.Flags&pack.FlagChunked != 0) != (n > thr) {
					t.Fatalf("locator %+v for %d bytes (threshold %d)", loc, n, thr)
				}
			})
		}
	}
}

// TestChunkBoundarySizes forces chunking of every blob so stream lengths
// around the chunk minimum and maximum and the reader's buffer are cut
// (with the long tests, one byte short of the maximum and two maximums
// and a byte too).
func TestChunkBoundarySizes(t *testing.T) {
	s, idx := testStore(t, Options{ChunkThreshold: 1})
	sizes := []int{2, chunkMin - 1, chunkMin, chunkMin + 1, chunkMax, chunkMax + 1}
	if testbound.LongTests() {
		sizes = append(sizes, chunkMax-1, 2*chunkMax+1)
	}
	for _, n := range sizes {
		data := randomBytes(uint64(n), n)
		if n > chunkMax {
			// Zeros never match the cut mask: every chunk is cut at
			// chunkMax, and the reader's buffer refills mid-chunk.
			data = make([]byte, n)
		}
		{
			ids, _ := save(t, s, idx, data)
			mustGet(t, s, ids[0], data)
			loc, _ := s.Stat(ids[0])
			if loc.Flags&pack.FlagChunked == 0 {
				// One chunk: its id is the file's id, no chunk list is needed.
				if n > chunkMax {
					t.Fatalf("%d bytes stored unchunked", n)
				}
				continue
			}
			chunks, err := s.ChunkList(ids[0])
			if err != nil {
				t.Fatal(err)
			}
			var total int
			for i, c := range chunks {
				cd, err := s.Get(c)
				if err != nil {
					t.Fatal(err)
				}
				last := i == len(chunks)-1
				if len(cd) > chunkMax || (!last && len(cd) < chunkMin) {
					t.Fatalf("size %d: chunk %d has %d bytes", n, i, len(cd))
				}
				total += len(cd)
			}
			if total != n {
				t.Fatalf("chunks hold %d bytes, want %d", total, n)
			}
		}
	}
}

func TestCutPointAverage(t *testing.T) {
	data := randomBytes(7, 32<<20)
	var count, sum int
	for len(data) > 0 {
		n := cutPoint(data)
		if n > chunkMax || (n < chunkMin && n != len(data)) {
			t.Fatalf("cut at %d", n)
		}
		data = data[n:]
		sum += n
		count++
	}
	if avg := sum / count; avg < chunkAvg*3/4 || avg > chunkAvg*2 {
		t.Fatalf("average chunk %d bytes, want about %d", avg, chunkAvg)
	}
}

func TestCompressionChoice(t *testing.T) {
	s, idx := testStore(t, Options{})
	random, text := randomBytes(1, 100<<10), textBytes(1, 100<<10)
	ids, _ := save(t, s, idx, random, text, []byte("short"))
	for i, wantCompressed := range []bool{false, true, false} {
		loc, err := s.Stat(ids[i])
		if err != nil {
			t.Fatal(err)
		}
		if got := loc.Flags&pack.FlagCompressed != 0; got != wantCompressed {
			t.Errorf("blob %d: compressed=%v, want %v", i, got, wantCompressed)
		}
		if !wantCompressed && int64(loc.Length) != pack.RecordHeaderLen+loc.Size {
			t.Errorf("raw blob %d: record length %d for %d bytes", i, loc.Length, loc.Size)
		}
	}
	if loc, _ := s.Stat(ids[1]); int64(loc.Length) > loc.Size/2 {
		t.Errorf("text compressed to %d of %d bytes", loc.Length, loc.Size)
	}
}

func TestCompressionLevels(t *testing.T) {
	data := textBytes(3, 128<<10)
	for level := range 5 {
		s, idx := testStore(t, Options{Level: level})
		ids, _ := save(t, s, idx, data)
		mustGet(t, s, ids[0], data)
	}
	if _, err := Open(t.TempDir(), newMapIndex(), Options{Level: 5}); err == nil {
		t.Fatal("level 5 accepted")
	}
}

func TestDedup(t *testing.T) {
	s, idx := testStore(t, Options{ChunkThreshold: 1 << 20})
	small, large := textBytes(1, 1000), randomBytes(2, 5<<20)
	b := s.NewBatch()
	for range 3 {
		for _, d := range [][]byte{small, large} {
			if _, err := b.PutBytes(d); err != nil {
				t.Fatal(err)
			}
		}
	}
	ps, err := b.Sync()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[ID]bool{}
	for _, p := range ps {
		if seen[p.ID] {
			t.Fatalf("blob %s written twice", p.ID.Short())
		}
		seen[p.ID] = true
	}
	if !seen[Sum(small)] || !seen[Sum(large)] {
		t.Fatal("placements miss a blob")
	}
	idx.commit(ps)
	b.Close()
	sizeBefore := packBytes(t, s)
	_, ps = save(t, s, idx, small, large)
	if len(ps) != 0 || packBytes(t, s) != sizeBefore {
		t.Fatalf("committed content rewritten: %d placements", len(ps))
	}
	b = s.NewBatch()
	defer b.Close()
	for _, d := range [][]byte{small, large, []byte("new")} {
		if ok, err := b.Has(Sum(d)); err != nil || ok != (len(d) != 3) {
			t.Fatalf("Has = %v, %v", ok, err)
		}
	}
}

// A Put of content a Sync returned, before the caller has committed its
// placements, writes nothing: the Batch counts them as stored until its
// next Sync (a save's flush commits while other files are put), a fresh
// one (a first save's) by the ids it synced.
func TestPutBeforeCommitWritesNothing(t *testing.T) {
	for _, c := range []struct{ groups, fresh bool }{{false, false}, {true, false}, {true, true}} {
		t.Run(fmt.Sprintf("groups=%v,fresh=%v", c.groups, c.fresh), func(t *testing.T) {
			s, idx := testStore(t, Options{ChunkThreshold: 256 << 10, Groups: c.groups})
			oneChunk := make([]byte, 700<<10) // zeros never cut before chunkMax
			content := [][]byte{textBytes(1, 1000), randomBytes(2, 200<<10), oneChunk, randomBytes(3, 3*chunkMax)}
			newBatch := s.NewBatch
			if c.fresh {
				newBatch = s.NewFreshBatch
			}
			b := newBatch()
			defer b.Close()
			putAll := func() {
				t.Helper()
				for _, d := range content {
					if id, err := b.PutBytes(d); err != nil || id != Sum(d) {
						t.Fatalf("put: %s, %v", id.Short(), err)
					}
				}
			}
			sync := func() []Placement {
				t.Helper()
				ps, err := b.Sync()
				if err != nil {
					t.Fatal(err)
				}
				return ps
			}
			putAll()
			first := sync()
			putAll() // before the commit
			idx.commit(first)
			if again := sync(); len(again) != 0 {
				t.Fatalf("%d placements written again before the commit", len(again))
			}
			putAll() // the index answers now
			if again := sync(); len(again) != 0 {
				t.Fatalf("%d placements written again after the commit", len(again))
			}
			for _, d := range content {
				mustGet(t, s, Sum(d), d)
			}
		})
	}
}

// Content above the threshold that makes one chunk is that chunk's plain
// blob, with no chunk list, even when its chunk's pending entry goes while
// the Put waits on it (a Sync dropping it, the way Sync once did before the
// caller's commit): a list written then under the chunk's own id would be
// committed over the chunk's locator, and the file read as corrupt.
func TestOneChunkContentIsItsChunk(t *testing.T) {
	s, _ := testStore(t, Options{ChunkThreshold: 256 << 10})
	oneChunk := make([]byte, 700<<10) // zeros never cut before chunkMax
	id := Sum(oneChunk)
	b := s.NewBatch()
	defer b.Close()
	held := &pendingBlob{done: make(chan struct{})}
	b.mu.Lock()
	b.mu.pending[id] = held
	b.mu.Unlock()
	put := make(chan error, 1)
	go func() {
		_, err := b.PutBytes(oneChunk)
		put <- err
	}()
	waitForWaitingStore(t)
	b.mu.Lock()
	delete(b.mu.pending, id)
	b.mu.Unlock()
	close(held.done)
	if err := <-put; err != nil {
		t.Fatal(err)
	}
	ps, err := b.Sync()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.Loc.Chunked() {
			t.Fatalf("content of one chunk stored as a chunk list: %+v", p)
		}
	}
	if len(ps) != 0 { // the held store stood for the chunk's
		t.Fatalf("%d records written for content whose one chunk another store holds", len(ps))
	}
}

// waitForWaitingStore returns once a goroutine waits in Batch.store for
// another store of the same blob, as the goroutine stacks show it.
func waitForWaitingStore(t *testing.T) {
	t.Helper()
	buf := make([]byte, 1<<20)
	testbound.Until(t, "a Put waiting on its chunk's store", func() bool {
		stacks := buf[:runtime.Stack(buf, true)]
		for g := range bytes.SplitSeq(stacks, []byte("\n\n")) {
			if bytes.Contains(g, []byte("[chan receive")) && bytes.Contains(g, []byte("objects.(*Batch).store(")) {
				return true
			}
		}
		return false
	})
}

// packBytes sums the sizes of the pack files.
func packBytes(t testing.TB, s *Store) int64 {
	t.Helper()
	packs, err := s.Packs()
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, n := range packs {
		fi, err := os.Stat(s.PackPath(n))
		if err != nil {
			t.Fatal(err)
		}
		total += fi.Size()
	}
	return total
}

// TestChunkedEditWritesFewChunks stores a chunked blob of 6 MiB (12 MiB
// with the long tests), then an overwrite in its middle and an insertion
// two thirds in: each writes the chunks around the change and a chunk list.
func TestChunkedEditWritesFewChunks(t *testing.T) {
	s, idx := testStore(t, Options{})
	size := testbound.Scale(6, 12) << 20
	data := randomBytes(9, size)
	_, ps := save(t, s, idx, data)
	if len(ps) < size>>21+1 {
		t.Fatalf("%d MiB stored as %d records", size>>20, len(ps))
	}
	edited := bytes.Clone(data)
	copy(edited[size/2:], "an edit in the middle")
	inserted := append(append(bytes.Clone(data[:size*2/3]), "inserted text"...), data[size*2/3:]...)
	for name, d := range map[string][]byte{"overwrite": edited, "insert": inserted} {
		ids, ps := save(t, s, idx, d)
		// The changed chunk, possibly its neighbour, and the chunk list.
		if len(ps) > 3 {
			t.Errorf("%s: %d records written, want at most 3", name, len(ps))
		}
		mustGet(t, s, ids[0], d)
	}
}

func TestManySmallSavesShareAPack(t *testing.T) {
	s, idx := testStore(t, Options{})
	for i := range 100 {
		save(t, s, idx, fmt.Appendf(nil, "save %d", i))
	}
	if packs, _ := s.Packs(); len(packs) != 1 {
		t.Fatalf("100 saves made %d packs", len(packs))
	}
	// A reopened store appends to the same pack.
	s2, err := Open(filepathDir(s), idx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	save(t, s2, idx, []byte("after reopen"))
	if packs, _ := s2.Packs(); len(packs) != 1 {
		t.Fatalf("reopened store made %d packs", len(packs))
	}
}

// filepathDir returns the directory s was opened on.
func filepathDir(s *Store) string { return s.dir[:len(s.dir)-len(packsDir)-1] }

func TestPackSizeCap(t *testing.T) {
	const capSize = 1 << 20
	s, idx := testStore(t, Options{PackSize: capSize, Writers: 2})
	var blobs [][]byte
	for i := range 12 {
		blobs = append(blobs, randomBytes(uint64(i), 200<<10+i))
	}
	blobs = append(blobs, randomBytes(99, capSize-1), randomBytes(98, capSize), randomBytes(97, capSize+1))
	ids, _ := save(t, s, idx, blobs...)
	for i, id := range ids {
		mustGet(t, s, id, blobs[i])
	}
	packs, _ := s.Packs()
	if len(packs) < 5 {
		t.Fatalf("%d packs for %d MiB under a 1 MiB cap", len(packs), 5)
	}
	for _, n := range packs {
		fi, _ := os.Stat(s.PackPath(n))
		if fi.Size() > int64(2*capSize+pack.RecordHeaderLen+pack.HeaderLen) {
			t.Errorf("pack %d has %d bytes", n, fi.Size())
		}
	}
}

func TestNotFound(t *testing.T) {
	s, _ := testStore(t, Options{})
	id := Sum([]byte("absent"))
	if _, err := s.Get(id); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get: %v", err)
	}
	if _, _, err := s.Open(id); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Open: %v", err)
	}
	if _, err := s.Stat(id); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Stat: %v", err)
	}
}

// TestHashReader hashes contents of several sizes one after another and
// from several goroutines at once: each equals Sum of the same bytes,
// whichever pooled hasher and buffer served it before.
func TestHashReader(t *testing.T) {
	sizes := []int{3<<20 + 17, 0, 1, 8191, 8192, 256 << 10, 4 << 10}
	var g sync.WaitGroup
	for w := range 4 {
		g.Go(func() {
			for i, size := range sizes {
				data := textBytes(uint64(5+w*len(sizes)+i), size)
				id, n, err := HashReader(struct{ io.Reader }{bytes.NewReader(data)})
				if err != nil || id != Sum(data) || n != int64(len(data)) {
					t.Errorf("HashReader of %d bytes = %s, %d, %v; want %s", size, id.Short(), n, err, Sum(data).Short())
				}
			}
		})
	}
	g.Wait()
}

func TestBatchClosed(t *testing.T) {
	s, _ := testStore(t, Options{})
	b := s.NewBatch()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.PutBytes([]byte("x")); err == nil {
		t.Fatal("Put after Close succeeded")
	}
	if _, err := b.Sync(); err == nil {
		t.Fatal("Sync after Close succeeded")
	}
}

func TestLocatorEncoding(t *testing.T) {
	for _, l := range []Locator{{}, {Pack: 1, Offset: 12, Length: 53, Size: 0}, {Pack: 1<<32 - 1, Offset: 1<<63 - 1, Length: 1<<32 - 1, Flags: pack.FlagChunked, Size: 1<<63 - 1}} {
		b := l.AppendBinary([]byte("prefix"))
		got, err := ParseLocator(b[6:])
		if err != nil || got != l {
			t.Fatalf("round trip %+v: %+v, %v", l, got, err)
		}
	}
	good := Locator{Pack: 3, Offset: 100, Length: 60, Flags: pack.FlagCompressed, Size: 70}.AppendBinary(nil)
	bad := [][]byte{nil, {1}, {2, 0, 0, 0, 0, 0}, {1, 0x80, 0, 0, 0, 0}, good[:len(good)-1], append(bytes.Clone(good), 0),
		{1, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0, 0, 0},
		{1, 0, 0xff, 0xff, 0xff, 0xff, 0x1f, 0, 0, 0}}
	for _, b := range bad {
		_, err := ParseLocator(b)
		mustCorrupt(t, err)
	}
}
