package objects

import (
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// A pack writer starts the device writing each writebackStep of a pack as
// it reaches the file: ranges from the pack's start, one after another
// without a gap or an overlap, each at least a step, none past the file.
// A writer that resumes the pack starts from where the pack ended.
func TestPackWriterStartsWritebackAsThePackGrows(t *testing.T) {
	s, idx := testStore(t, Options{})
	var mu sync.Mutex
	type span struct{ off, n int64 }
	var spans []span
	s.writeback = func(_ vfs.File, off, n int64) {
		mu.Lock()
		defer mu.Unlock()
		spans = append(spans, span{off, n})
	}
	write := func(seed uint64) int64 {
		t.Helper()
		var blobs [][]byte
		for i := range 20 { // 20 MiB that do not compress
			blobs = append(blobs, randomBytes(seed+uint64(i), 1<<20))
		}
		save(t, s, idx, blobs...)
		packs, err := s.Packs()
		if err != nil || len(packs) != 1 {
			t.Fatalf("packs %v, %v; want one", packs, err)
		}
		fi, err := s.opts.FS.Stat(s.PackPath(packs[0]))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	check := func(from, size int64, want int) {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		if len(spans) != want {
			t.Fatalf("%d ranges started for %d bytes from %d: %v", len(spans), size-from, from, spans)
		}
		next := from
		for _, sp := range spans {
			if sp.off != next || sp.n < writebackStep || sp.off+sp.n > size {
				t.Fatalf("ranges %v of a pack of %d bytes, from %d", spans, size, from)
			}
			next = sp.off + sp.n
		}
		spans = nil
	}
	first := write(1)
	check(0, first, 2)
	check(first, write(100), 2)
}
