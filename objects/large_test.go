package objects

import (
	"encoding/binary"
	"io"
	"runtime"
	"testing"

	"github.com/zeebo/blake3"

	"github.com/ckpt/ckpt/internal/testbound"
)

// largeStreamSize is the length of the stream TestLargeStreamBoundedMemory
// puts: 128 MiB, twice the heap growth it allows, and 2.5 GiB with the long
// tests unless the race detector runs (which slows the byte loops tenfold;
// the memory bound is the same either way).
var largeStreamSize = int64(128 << 20)

func init() {
	if testbound.LongTests() && !raceEnabled {
		largeStreamSize = 5 << 29
	}
}

// patternStream is a cheap, deterministic, low-entropy stream: a 64 KiB
// text block repeated with a running counter stamped every 4 KiB, so no
// two chunks are equal but everything compresses well. It samples the heap
// every 64 MiB it hands out.
type patternStream struct {
	block   []byte
	off     int64
	size    int64
	peak    uint64
	counter uint64
}

func (p *patternStream) Read(b []byte) (int, error) {
	if p.off == p.size {
		return 0, io.EOF
	}
	b = b[:min(int64(len(b)), p.size-p.off)]
	n := 0
	for n < len(b) {
		pos := int((p.off + int64(n)) % int64(len(p.block)))
		c := copy(b[n:], p.block[pos:])
		n += c
	}
	for i := (p.off + 4095) &^ 4095; i+8 <= p.off+int64(n); i += 4096 {
		p.counter++
		binary.LittleEndian.PutUint64(b[i-p.off:], p.counter)
	}
	if p.off/(64<<20) != (p.off+int64(n))/(64<<20) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		p.peak = max(p.peak, ms.HeapInuse)
	}
	p.off += int64(n)
	return n, nil
}

func TestLargeStreamBoundedMemory(t *testing.T) {
	s, idx := testStore(t, Options{})
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	want := blake3.New()
	src := &patternStream{block: textBytes(1, 64<<10), size: largeStreamSize}
	b := s.NewBatch()
	id, n, err := b.Put(io.TeeReader(src, want))
	if err != nil {
		t.Fatal(err)
	}
	ps, err := b.Sync()
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	idx.commit(ps)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)

	if n != largeStreamSize || id != ID(want.Sum(nil)) {
		t.Fatalf("Put = %s, %d; want %s, %d", id.Short(), n, ID(want.Sum(nil)).Short(), largeStreamSize)
	}
	growth := int64(src.peak) - int64(before.HeapInuse)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d MiB stream: %d records, heap in use grew at most %d MiB, %d MiB allocated in total",
		n>>20, len(ps), growth>>20, allocated>>20)
	if growth > 64<<20 {
		t.Errorf("heap in use grew by %d MiB while streaming", growth>>20)
	}
	if allocated > 128<<20 {
		t.Errorf("allocated %d MiB for a %d MiB stream", allocated>>20, largeStreamSize>>20)
	}

	// Read it back as a stream: every chunk and the whole hash verified.
	rc, size, err := s.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got, m, err := HashReader(rc)
	if err != nil || got != id || m != size {
		t.Fatalf("read back %s, %d bytes, %v", got.Short(), m, err)
	}
}
