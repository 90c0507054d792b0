package objects

import (
	"fmt"
	"sync"
	"testing"
)

// TestConcurrentPutGet runs many goroutines putting overlapping content
// while others read committed blobs and one syncs and commits repeatedly,
// with blobs in records of their own and in groups.
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
			for i := range 40 {
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
