package objects

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ckpt/ckpt/internal/testbound"
	"github.com/ckpt/ckpt/objects/internal/pack"
)

// TestConcurrentPutGet runs many goroutines putting overlapping content
// (16 puts each, 40 with the long tests) while others read committed blobs
// and one syncs and commits repeatedly, with blobs in records of their own
// and in groups.
func TestConcurrentPutGet(t *testing.T) {
	for _, groups := range []bool{false, true} {
		t.Run(fmt.Sprintf("groups=%v", groups), func(t *testing.T) { concurrentPutGet(t, groups) })
	}
}

func concurrentPutGet(t *testing.T, groups bool) {
	s, idx := testStore(t, Options{PackSize: 1 << 20, ChunkThreshold: 256 << 10, Writers: 3, Groups: groups})
	content := make([][]byte, 64)
	for i := range content {
		switch {
		case i%16 == 15: // chunked
			content[i] = randomBytes(uint64(i), 700<<10)
		case i%2 == 0:
			content[i] = textBytes(uint64(i), 1500*i)
		default:
			content[i] = randomBytes(uint64(i), 3000*i)
		}
	}
	committed, _ := save(t, s, idx, content[:8]...)

	b := s.NewBatch()
	defer b.Close()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		written = map[ID]int{}
		errs    = make(chan error, 64)
	)
	collect := func() error {
		ps, err := b.Sync()
		if err != nil {
			return err
		}
		idx.commit(ps)
		mu.Lock()
		defer mu.Unlock()
		for _, p := range ps {
			written[p.ID]++
		}
		return nil
	}
	for g := range 8 {
		wg.Go(func() {
			for i := range testbound.Scale(16, 40) {
				data := content[(g*7+i*3)%len(content)]
				if id, err := b.PutBytes(data); err != nil || id != Sum(data) {
					errs <- fmt.Errorf("put: %v", err)
					return
				}
				if ok, err := b.Has(Sum(data)); !ok || err != nil {
					errs <- fmt.Errorf("Has after Put = %v, %v", ok, err)
					return
				}
				id := committed[(g+i)%len(committed)]
				if got, err := s.Get(id); err != nil || Sum(got) != id {
					errs <- fmt.Errorf("get: %v", err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for range 5 {
			if err := collect(); err != nil {
				errs <- err
			}
		}
	})
	wg.Wait()
	if err := collect(); err != nil {
		t.Fatal(err)
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for id, n := range written {
		if n != 1 {
			t.Errorf("blob %s written %d times", id.Short(), n)
		}
	}
	for i, data := range content {
		if i >= 8 && written[Sum(data)] == 0 {
			continue // not every content was picked
		}
		mustGet(t, s, Sum(data), data)
	}
}

// Two reads of members in different frames of one group decode their
// frames at the same time: each read, about to decode its frame, waits
// until the other has started decoding the other frame, which a lock over
// the whole group would never let happen.
func TestGroupReadersOfDifferentFramesDecodeAtOnce(t *testing.T) {
	s, idx := testStore(t, Options{Groups: true})
	const memberLen = 60 << 10
	var blobs [][]byte
	for i := range 15 {
		blobs = append(blobs, textBytes(uint64(i), memberLen))
	}
	ids, _ := save(t, s, idx, blobs...)
	loc, _ := s.Stat(ids[0])
	raw, err := s.rawRecord(loc)
	if err != nil {
		t.Fatal(err)
	}
	h, err := parseRecordHeader(raw)
	if err != nil {
		t.Fatal(err)
	}
	stored := storedPayload(raw[pack.RecordHeaderLen:])
	g, err := newGroupReader(h, stored)
	if err != nil {
		t.Fatal(err)
	}
	// inFrame is the first member wholly inside frame f.
	inFrame := func(f int) int {
		fr := g.frames[f]
		for i := range ids {
			start := int64(pack.GroupHeadLen + len(ids)*pack.GroupEntryLen + i*memberLen)
			if start >= fr.start && start+memberLen <= fr.start+fr.size {
				return i
			}
		}
		t.Fatalf("no member lies wholly inside frame %d", f)
		return 0
	}
	frames := [2]int{1, 2}
	members := [2]int{inFrame(frames[0]), inFrame(frames[1])}
	started := map[int]chan struct{}{frames[0]: make(chan struct{}), frames[1]: make(chan struct{})}
	g.decoding = func(f int) {
		if started[f] == nil {
			return // the table's frame
		}
		close(started[f])
		other := frames[0] + frames[1] - f
		select {
		case <-started[other]:
		case <-time.After(10 * time.Second):
			t.Errorf("frame %d did not start decoding while frame %d was being decoded", other, f)
		}
	}
	var wg sync.WaitGroup
	for _, m := range members {
		wg.Go(func() {
			mloc, _ := s.Stat(ids[m])
			_, got, err := g.member(s.codec, stored, nil, mloc, ids[m], s.recordCorrupt(mloc, ids[m]))
			if err != nil || !bytes.Equal(got, blobs[m]) {
				t.Errorf("member %d: %v", m, err)
			}
		})
	}
	wg.Wait()
}
