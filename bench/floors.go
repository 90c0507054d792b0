//go:build linux

package main

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/zeebo/blake3"
	"golang.org/x/sys/unix"
)

// statFloor is the floor of a save that finds nothing changed: one getdents
// per directory and one fstatat (directory-fd relative, no symlink follow)
// per entry, on all cores, without descending into the skipped directory
// names. It returns the time and the regular files seen.
func statFloor(root string, skip []string) (time.Duration, []string, error) {
	var (
		mu      sync.Mutex
		cond    = sync.NewCond(&mu)
		stack   = []string{root}
		pending = 1
		files   []string
		first   error
	)
	worker := func() {
		var local []string
		for {
			mu.Lock()
			for len(stack) == 0 && pending > 0 {
				cond.Wait()
			}
			if pending == 0 {
				files = append(files, local...)
				mu.Unlock()
				return
			}
			dir := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			mu.Unlock()

			subdirs, regular, err := statDir(dir, skip)
			local = append(local, regular...)
			mu.Lock()
			if err != nil && first == nil {
				first = err
			}
			stack = append(stack, subdirs...)
			pending += len(subdirs) - 1
			cond.Broadcast()
			mu.Unlock()
		}
	}
	start := time.Now()
	var wg sync.WaitGroup
	for range max(runtime.GOMAXPROCS(0), 2) {
		wg.Go(worker)
	}
	wg.Wait()
	return time.Since(start), files, first
}

// statDir lists one directory and lstats its entries relative to its fd.
func statDir(dir string, skip []string) (subdirs, regular []string, err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, nil, err
	}
	fd := int(f.Fd())
	var st unix.Stat_t
	for _, n := range names {
		if err := unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return nil, nil, err
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			if !slices.Contains(skip, n) {
				subdirs = append(subdirs, filepath.Join(dir, n))
			}
		case unix.S_IFREG:
			regular = append(regular, filepath.Join(dir, n))
		}
	}
	return subdirs, regular, nil
}

// hashFloorBatch bounds the bytes held in memory by hashFloor.
const hashFloorBatch = 256 << 20

// hashFloor is the floor of a first save: BLAKE3 and zstd (fastest level,
// the store's encoder options) over every byte of files, in memory, on all
// cores, files over floorPiece bytes cut into floorPiece pieces as the store
// chunks large files, so that one large file does not serialise the pass. Files are loaded in
// batches of up to hashFloorBatch bytes; only the hashing and compressing is
// timed. It returns the time and the bytes processed.
func hashFloor(files []string) (time.Duration, int64, error) {
	workers := runtime.GOMAXPROCS(0)
	encoders := make([]*zstd.Encoder, workers)
	dsts := make([][]byte, workers)
	for i := range encoders {
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
			zstd.WithLowerEncoderMem(true), zstd.WithEncoderCRC(false))
		if err != nil {
			return 0, 0, err
		}
		encoders[i] = enc
	}
	var total time.Duration
	var bytes int64
	for len(files) > 0 {
		var batch [][]byte
		size := 0
		for len(files) > 0 && size < hashFloorBatch {
			data, err := os.ReadFile(files[0])
			if err != nil {
				return 0, 0, err
			}
			files = files[1:]
			batch = append(batch, data)
			size += len(data)
		}
		bytes += int64(size)
		pieces := splitPieces(batch)
		var next atomic.Int64
		start := time.Now()
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := next.Add(1) - 1; i < int64(len(pieces)); i = next.Add(1) - 1 {
					_ = blake3.Sum256(pieces[i])
					dsts[w] = encoders[w].EncodeAll(pieces[i], dsts[w][:0])
				}
			})
		}
		wg.Wait()
		total += time.Since(start)
	}
	return total, bytes, nil
}

// floorPiece is the unit of work of hashFloor.
const floorPiece = 1 << 20

// splitPieces cuts each buffer into pieces of at most floorPiece bytes.
func splitPieces(bufs [][]byte) [][]byte {
	var out [][]byte
	for _, b := range bufs {
		for len(b) > floorPiece {
			out = append(out, b[:floorPiece])
			b = b[floorPiece:]
		}
		out = append(out, b)
	}
	return out
}
