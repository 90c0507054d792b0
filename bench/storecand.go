//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/ckpt/ckpt/objects"
)

// noIndex is the empty index of a store written by one fresh batch.
type noIndex struct{}

func (noIndex) Locator(objects.ID) (objects.Locator, bool, error) {
	return objects.Locator{}, false, nil
}

// storeCandidate writes the blobs through objects itself into a
// store under dir, one fresh batch synced after every batch of blobs, and
// charges the store's bytes on disk: the format as implemented, framing
// included.
func storeCandidate(name, dir string, opts objects.Options) candidate {
	var (
		s *objects.Store
		b *objects.Batch
	)
	c := candidate{Name: name}
	c.prepare = func([][]byte) (int64, error) {
		var err error
		if s, err = objects.Open(dir, noIndex{}, opts); err != nil {
			return 0, err
		}
		b = s.NewFreshBatch()
		return 0, nil
	}
	c.encode = func(batch [][]byte) (int64, error) {
		var wg sync.WaitGroup
		errs := make([]error, runtime.GOMAXPROCS(0))
		for w := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < len(batch) && errs[w] == nil; i += len(errs) {
					_, _, errs[w] = b.Put(bytes.NewReader(batch[i]))
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return 0, err
			}
		}
		_, err := b.Sync()
		return 0, err
	}
	c.finish = func() (int64, error) {
		if s == nil { // no blob at all
			return 0, nil
		}
		if err := b.Close(); err != nil {
			return 0, err
		}
		if err := s.Close(); err != nil {
			return 0, err
		}
		n, err := diskUsage(filepath.Join(dir, "packs"))
		if err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		return n, os.RemoveAll(dir)
	}
	return c
}
