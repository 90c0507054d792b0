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

	"github.com/ckpt/ckpt/internal/osfs"
	"github.com/klauspost/compress/zstd"
	"github.com/zeebo/blake3"
	"golang.org/x/sync/errgroup"
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

// restoreFloorWriters is how many files restoreFloor writes at once, as
// many as a restore keeps in flight: with each file synced, many syncs in
// flight share the file system's journal commits.
const restoreFloorWriters = 32

// restoreFloor is the floor of a restore: writing and syncing exactly the
// files it changes. Each file of rewrite gets its current content and mode
// again through a temporary sibling (write, chmod, fdatasync, rename, as a
// restore writes a file), each of remove
// is unlinked, then every directory touched is synced once; files in
// parallel. With syncfs, as a restore does while the system holds little
// unwritten data, no file or directory is synced alone: the temporary
// files are written, one syncfs(2) makes them durable, the renames follow,
// and a second syncfs makes them and the removals durable. The contents are
// read, and the files to remove created and synced, before the clock
// starts. It leaves rewrite as it found them and remove gone, and returns
// the time.
func restoreFloor(rewrite, remove []string, syncfs bool) (time.Duration, error) {
	contents := make([][]byte, len(rewrite))
	modes := make([]os.FileMode, len(rewrite))
	for i, name := range rewrite {
		info, err := os.Stat(name)
		if err != nil {
			return 0, err
		}
		if contents[i], err = os.ReadFile(name); err != nil {
			return 0, err
		}
		modes[i] = info.Mode().Perm()
	}
	for _, name := range remove {
		if err := writeFile(name, []byte("removed by the restore floor\n"), 0o644, true); err != nil {
			return 0, err
		}
	}
	dirs := map[string]bool{}
	for _, name := range slices.Concat(rewrite, remove) {
		dirs[filepath.Dir(name)] = true
	}
	for dir := range dirs { // the created files' entries, before the clock starts
		if err := syncDir(dir); err != nil {
			return 0, err
		}
	}
	start := time.Now()
	tmps := make([]string, len(rewrite))
	var g errgroup.Group
	g.SetLimit(restoreFloorWriters)
	for i, name := range rewrite {
		g.Go(func() error {
			tmps[i] = filepath.Join(filepath.Dir(name), ".restore-floor-"+filepath.Base(name))
			if err := writeFile(tmps[i], contents[i], modes[i], !syncfs); err != nil {
				return err
			}
			if syncfs {
				return nil // renamed once durable
			}
			return os.Rename(tmps[i], name)
		})
	}
	for _, name := range remove {
		g.Go(func() error { return os.Remove(name) })
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	if syncfs {
		root := filepath.Dir(slices.Concat(rewrite, remove)[0]) // any: they share one file system
		if err := osfs.SyncFilesystem(root); err != nil {
			return 0, err
		}
		for i, name := range rewrite {
			g.Go(func() error { return os.Rename(tmps[i], name) })
		}
		if err := g.Wait(); err != nil {
			return 0, err
		}
		if err := osfs.SyncFilesystem(root); err != nil {
			return 0, err
		}
		return time.Since(start), nil
	}
	for dir := range dirs {
		g.Go(func() error { return syncDir(dir) })
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// writeFile creates name with data and mode, and fdatasyncs it if sync.
func writeFile(name string, data []byte, mode os.FileMode, sync bool) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil && sync {
		err = unix.Fdatasync(int(f.Fd()))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncDir makes dir's entries durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
