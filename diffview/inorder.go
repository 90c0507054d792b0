package diffview

import (
	"runtime"
	"sync"
)

// inOrder calls work(i) for every i in [0, n) on all cores and emit(i) for
// each in turn, in index order, once work(i) has returned. A change's
// rendering mostly loads its sides (decompressing, verifying), so a patch
// of many files is rendered in parallel and written as one. At most
// 2*GOMAXPROCS results wait for emit at any time, so memory stays bounded
// by a few sections whatever the number of changes. The first error (of
// work, in index order, or of emit) is returned; work already started
// finishes, and no work or emit starts after it.
func inOrder(n int, work func(i int) error, emit func(i int) error) error {
	workers := runtime.GOMAXPROCS(0)
	if n <= 1 || workers == 1 {
		for i := range n {
			if err := work(i); err != nil {
				return err
			}
			if err := emit(i); err != nil {
				return err
			}
		}
		return nil
	}
	workers = min(workers, n)
	var (
		done  = make([]chan error, n)
		slots = make(chan struct{}, 2*workers) // results not yet emitted
		quit  = make(chan struct{})
		next  = make(chan int)
		wg    sync.WaitGroup
	)
	for i := range done {
		done[i] = make(chan error, 1)
	}
	// The feeder hands out indices in order, each once a slot is free, so
	// the results in flight are always the lowest not yet emitted.
	wg.Go(func() {
		defer close(next)
		for i := range n {
			select {
			case slots <- struct{}{}:
			case <-quit:
				return
			}
			select {
			case next <- i:
			case <-quit:
				return
			}
		}
	})
	for range workers {
		wg.Go(func() {
			for i := range next {
				done[i] <- work(i)
			}
		})
	}
	var err error
	for i := range n {
		if err = <-done[i]; err == nil {
			err = emit(i)
		}
		if err != nil {
			break
		}
		<-slots
	}
	close(quit)
	wg.Wait()
	return err
}
