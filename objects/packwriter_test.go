package objects

import (
	"bytes"
	"errors"
	"os"
	"sync"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/ckpt/ckpt/internal/faultfs"
	"github.com/ckpt/ckpt/internal/storefs"
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

// A batch closed before it synced its last records (a failed or cancelled
// save) cuts them off its packs: what it gives back is exactly what it
// wrote after its last Sync, whether it stopped on its own or on a full
// disk, and a later batch appends after the synced records.
func TestABatchClosedUnsyncedGivesBackWhatItWrote(t *testing.T) {
	fsys := &faultfs.Nth{FailAt: -1, Errno: syscall.ENOSPC}
	idx := newMapIndex()
	s, err := Open(t.TempDir(), idx, Options{FS: faultfs.Wrap(storefs.OS, fsys), Writers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	packBytes := func() int64 {
		t.Helper()
		packs, err := s.Packs()
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, p := range packs {
			fi, err := os.Stat(s.PackPath(p))
			if err != nil {
				t.Fatal(err)
			}
			n += fi.Size()
		}
		return n
	}
	blobs := func(seed uint64) [][]byte { // 3 MiB that do not compress: past the writer's buffer
		var out [][]byte
		for i := range 3 {
			out = append(out, randomBytes(seed+uint64(i), 1<<20))
		}
		return out
	}
	kept, _ := save(t, s, idx, blobs(1)...)
	synced := packBytes()

	// Abandoned: a Sync, then more records, then Close.
	b := s.NewBatch()
	for _, data := range blobs(10) {
		if _, _, err := b.Put(bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
	}
	ps, err := b.Sync()
	if err != nil {
		t.Fatal(err)
	}
	idx.commit(ps)
	synced = packBytes()
	for _, data := range blobs(20) {
		if _, _, err := b.Put(bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
	}
	if packBytes() <= synced {
		t.Fatal("the unsynced records never reached the pack: the test shows nothing")
	}
	b.Close()
	if got := packBytes(); got != synced {
		t.Fatalf("an abandoned batch left the packs at %d bytes, want %d", got, synced)
	}

	// Stopped by a full disk: the second buffered write fails, or the
	// first (torn: half its bytes reach the file, and no record of the
	// batch was appended whole).
	for _, failing := range []int{2, 1} {
		writes := 0
		fsys.Fails = func(_ int, op faultfs.Op) bool {
			if op.Kind != faultfs.OpFileWrite {
				return false
			}
			writes++
			return writes == failing
		}
		b = s.NewBatch()
		var putErr error
		for _, data := range blobs(30) {
			if _, _, putErr = b.Put(bytes.NewReader(data)); putErr != nil {
				break
			}
		}
		if _, err := b.Sync(); !errors.Is(errors.Join(putErr, err), syscall.ENOSPC) {
			t.Fatalf("a batch on a full disk from write %d: put %v, sync %v; want ENOSPC", failing, putErr, err)
		}
		b.Close()
		fsys.Fails = nil
		if got := packBytes(); got != synced {
			t.Fatalf("a batch failed on a full disk from write %d left the packs at %d bytes, want %d", failing, got, synced)
		}
	}

	after, _ := save(t, s, idx, blobs(40)...)
	for i, data := range blobs(1) {
		mustGet(t, s, kept[i], data)
	}
	for i, data := range blobs(40) {
		mustGet(t, s, after[i], data)
	}
}
