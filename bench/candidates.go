//go:build linux

package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ckpt/ckpt/objects"
	"github.com/klauspost/compress/dict"
	"github.com/klauspost/compress/zstd"
	"github.com/zeebo/blake3"
)

// Store framing the candidates are charged for, as in objects:
// each record has a 53-byte header; a grouped blob adds a 40-byte member
// entry (id, offset, length) to its group.
const (
	candRecordHeader = 53
	candMemberEntry  = 40
	candMinSaving    = 32 // keep a frame only if it saves 1/32
)

// candidate is one way of compressing the blobs of a store. Each sees the
// same batches of distinct blobs, in walk order, and reports the bytes it
// would put on disk.
type candidate struct {
	Name     string  `json:"name"`
	Bytes    int64   `json:"bytes"`
	Seconds  float64 `json:"seconds"`
	encode   func(blobs [][]byte) (int64, error)
	prepare  func(blobs [][]byte) (int64, error) // once, on the first batch (dictionary training)
	prepared bool
	finish   func() (int64, error) // after the last batch: bytes on disk
	byName   bool                  // sees each batch ordered by file name, then size (git's delta order)
}

// candidateReport is the JSON written by "bench compress".
type candidateReport struct {
	Corpus     string      `json:"corpus"`
	Files      int         `json:"files"`
	Blobs      int         `json:"blobs"`
	RawBytes   int64       `json:"raw_bytes"`
	Load       string      `json:"load"`
	Candidates []candidate `json:"candidates"`
}

// runCandidates measures every store candidate on the files under a
// directory in one run, batch by batch and interleaved, so that machine
// load affects them alike.
func runCandidates(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("compress", flag.ContinueOnError)
	dir := fs.String("corpus", "", "directory whose files are compressed")
	smallMax := fs.Int("small", 16<<10, "largest blob grouped or dictionary-compressed")
	groupRaw := fs.Int("group", 128<<10, "raw bytes per solid group")
	jsonOut := fs.String("json", "", "write the results as JSON to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return fmt.Errorf("-corpus is required")
	}
	scratch, err := os.MkdirTemp("", "ckpt-bench-stores-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	cands, err := newCandidates(*smallMax, *groupRaw)
	if err != nil {
		return err
	}
	cands = append(cands,
		storeCandidate("objects store, per-blob records (today)", filepath.Join(scratch, "plain"), objects.Options{}),
		storeCandidate("objects store, Options.Groups (kept)", filepath.Join(scratch, "groups"), objects.Options{Groups: true}))
	rep := candidateReport{Corpus: *dir, Load: loadAverage()}
	seen := map[[32]byte]struct{}{}
	var batch [][]byte
	var names []string
	var batchBytes int64
	flush := func() error {
		sorted := sortedByName(batch, names)
		for i := range cands {
			in := batch
			if cands[i].byName {
				in = sorted
			}
			if err := cands[i].run(in); err != nil {
				return fmt.Errorf("%s: %w", cands[i].Name, err)
			}
		}
		batch, names, batchBytes = nil, nil, 0
		return nil
	}
	err = walkFiles(*dir, func(path string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rep.Files++
		id := blake3.Sum256(data)
		if _, dup := seen[id]; dup {
			return nil
		}
		seen[id] = struct{}{}
		rep.Blobs++
		rep.RawBytes += int64(len(data))
		batch, names = append(batch, data), append(names, filepath.Base(path))
		if batchBytes += int64(len(data)); batchBytes >= 256<<20 {
			progress("compress: %d files, %.0f MiB", rep.Files, mib(rep.RawBytes))
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	for i := range cands {
		if err == nil && cands[i].finish != nil {
			cands[i].Bytes, err = cands[i].finish()
		}
	}
	if err != nil {
		return err
	}
	rep.Candidates = cands
	fmt.Printf("corpus %s: %d files, %d distinct blobs, %.0f MiB raw; load %s\n\n", rep.Corpus, rep.Files, rep.Blobs, mib(rep.RawBytes), rep.Load)
	fmt.Println("| candidate | store MiB | ÷ per-blob fastest | compress s | time ÷ per-blob fastest |")
	fmt.Println("|---|--:|--:|--:|--:|")
	base := cands[0]
	for _, c := range cands {
		fmt.Printf("| %s | %.1f | %.3f | %.2f | %.2f |\n", c.Name, mib(c.Bytes), float64(c.Bytes)/float64(base.Bytes), c.Seconds, c.Seconds/base.Seconds)
	}
	if *jsonOut == "" {
		return nil
	}
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(*jsonOut, append(data, '\n'), 0o644)
}

// run feeds one batch to the candidate and accounts its bytes and time.
func (c *candidate) run(batch [][]byte) error {
	start := time.Now()
	if c.prepare != nil && !c.prepared {
		n, err := c.prepare(batch)
		if err != nil {
			return err
		}
		c.Bytes += n
		c.prepared = true
	}
	n, err := c.encode(batch)
	c.Seconds += time.Since(start).Seconds()
	c.Bytes += n
	return err
}

// newCandidates returns the candidates, today's per-blob fastest first.
func newCandidates(smallMax, groupRaw int) ([]candidate, error) {
	fastest := newEncoderPool(zstd.SpeedFastest, nil)
	better := newEncoderPool(zstd.SpeedBetterCompression, nil)
	var dictPool *encoderPool
	cands := []candidate{
		{Name: "per-blob zstd fastest (today)", encode: perBlob(fastest)},
		{Name: "per-blob zstd better (background level)", encode: perBlob(better)},
		{Name: fmt.Sprintf("dictionary (64 KiB, blobs ≤ %d KiB) + fastest", smallMax>>10),
			prepare: func(batch [][]byte) (int64, error) {
				var sample [][]byte
				for _, b := range batch {
					if len(b) <= smallMax && len(b) >= 64 {
						sample = append(sample, b)
					}
				}
				d, err := dict.BuildZstdDict(sample, dict.Options{MaxDictSize: 64 << 10, HashBytes: 6, ZstdLevel: zstd.SpeedFastest})
				if err != nil {
					return 0, err
				}
				dictPool = newEncoderPool(zstd.SpeedFastest, d)
				return int64(len(d)) + candRecordHeader, nil
			},
			encode: func(batch [][]byte) (int64, error) {
				small, large := split(batch, smallMax)
				a, err := perBlob(dictPool)(small)
				if err != nil {
					return 0, err
				}
				b, err := perBlob(fastest)(large)
				return a + b, err
			}},
		{Name: fmt.Sprintf("solid groups (%d KiB, blobs ≤ %d KiB) fastest", groupRaw>>10, smallMax>>10), encode: solid(fastest, smallMax, groupRaw)},
		{Name: fmt.Sprintf("solid groups (%d KiB) fastest", 4*groupRaw>>10), encode: solid(fastest, smallMax, 4*groupRaw)},
		{Name: fmt.Sprintf("solid groups (%d KiB) better (background level)", groupRaw>>10), encode: solid(better, smallMax, groupRaw)},
		{Name: "solid groups (1 MiB, blobs ≤ 1 MiB) fastest", encode: solid(fastest, 1<<20, 1<<20)},
		{Name: "solid groups (1 MiB, blobs ≤ 1 MiB) fastest, by name", encode: solid(fastest, 1<<20, 1<<20), byName: true},
		{Name: fmt.Sprintf("solid groups (%d KiB) fastest, by name", groupRaw>>10), encode: solid(fastest, smallMax, groupRaw), byName: true},
		{Name: "solid groups (1 MiB, blobs ≤ 1 MiB) better, by name", encode: solid(better, 1<<20, 1<<20), byName: true},
	}
	return cands, nil
}

// sortedByName returns the blobs ordered by file name, then size, as git
// orders objects when it looks for deltas.
func sortedByName(batch [][]byte, names []string) [][]byte {
	idx := make([]int, len(batch))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		return cmp.Or(strings.Compare(names[a], names[b]), cmp.Compare(len(batch[a]), len(batch[b])))
	})
	out := make([][]byte, len(batch))
	for i, j := range idx {
		out[i] = batch[j]
	}
	return out
}

// split separates the blobs of at most smallMax bytes from the others.
func split(batch [][]byte, smallMax int) (small, large [][]byte) {
	for _, b := range batch {
		if len(b) <= smallMax {
			small = append(small, b)
		} else {
			large = append(large, b)
		}
	}
	return small, large
}

// perBlob compresses every blob on its own, as the store does today.
func perBlob(p *encoderPool) func([][]byte) (int64, error) {
	return func(batch [][]byte) (int64, error) {
		return p.parallel(len(batch), func(e *zstd.Encoder, i int, dst []byte) ([]byte, int64) {
			return storedSize(e, batch[i], dst)
		}), nil
	}
}

// solid compresses blobs up to smallMax bytes in groups of about groupRaw
// raw bytes, one frame per group, and larger blobs on their own.
func solid(p *encoderPool, smallMax, groupRaw int) func([][]byte) (int64, error) {
	return func(batch [][]byte) (int64, error) {
		small, large := split(batch, smallMax)
		var groups [][]byte
		var cur []byte
		members := 0
		for _, b := range small {
			cur = append(cur, b...)
			members++
			if len(cur) >= groupRaw {
				groups, cur = append(groups, cur), nil
			}
		}
		if len(cur) > 0 {
			groups = append(groups, cur)
		}
		n := p.parallel(len(groups), func(e *zstd.Encoder, i int, dst []byte) ([]byte, int64) {
			return storedSize(e, groups[i], dst)
		})
		l, _ := perBlob(p)(large)
		return n + l + int64(members)*candMemberEntry, nil
	}
}

// storedSize is a record's size on disk: header plus the zstd frame, or
// the raw bytes when compression saves too little.
func storedSize(e *zstd.Encoder, b, dst []byte) ([]byte, int64) {
	if len(b) < 64 {
		return dst, candRecordHeader + int64(len(b))
	}
	dst = e.EncodeAll(b, dst[:0])
	if len(dst) > len(b)-len(b)/candMinSaving {
		return dst, candRecordHeader + int64(len(b))
	}
	return dst, candRecordHeader + int64(len(dst))
}

// encoderPool runs encodes on all cores, one encoder per worker.
type encoderPool struct {
	encs []*zstd.Encoder
}

func newEncoderPool(level zstd.EncoderLevel, d []byte) *encoderPool {
	p := &encoderPool{}
	for range runtime.GOMAXPROCS(0) {
		opts := []zstd.EOption{zstd.WithEncoderLevel(level), zstd.WithEncoderConcurrency(1),
			zstd.WithEncoderCRC(false), zstd.WithLowerEncoderMem(true), zstd.WithZeroFrames(true)}
		if d != nil {
			opts = append(opts, zstd.WithEncoderDict(d))
		}
		e, err := zstd.NewWriter(nil, opts...)
		if err != nil {
			panic(err) // options are constant; a dictionary error shows at build
		}
		p.encs = append(p.encs, e)
	}
	return p
}

// parallel calls f for 0..n-1 spread over the pool's encoders and sums the
// sizes it returns.
func (p *encoderPool) parallel(n int, f func(e *zstd.Encoder, i int, dst []byte) ([]byte, int64)) int64 {
	var wg sync.WaitGroup
	sums := make([]int64, len(p.encs))
	for w, e := range p.encs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var dst []byte
			for i := w; i < n; i += len(p.encs) {
				var s int64
				dst, s = f(e, i, dst)
				sums[w] += s
			}
		}()
	}
	wg.Wait()
	var total int64
	for _, s := range sums {
		total += s
	}
	return total
}

// walkFiles calls fn for every regular file under root in lexical order,
// skipping .git directories.
func walkFiles(root string, fn func(path string) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && d.Name() == ".git":
			return filepath.SkipDir
		case d.Type().IsRegular():
			return fn(path)
		}
		return nil
	})
}

// loadAverage returns the 1, 5 and 15-minute load averages.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(data)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}
