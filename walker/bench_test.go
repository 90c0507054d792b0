package walker

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
)

var benchFiles = flag.Int("walker.bench-files", 100_000, "files in the generated benchmark tree")
var benchWorkers = flag.Int("walker.bench-workers", 0, "walker workers (0: the default)")

// genBenchTree writes a deterministic tree of about n small files: 10×10
// directories of leaf directories holding 100 files each, plus a .gitignore.
func genBenchTree(b *testing.B, root string, n int) {
	b.Helper()
	const perDir = 100
	leaves := max(n/perDir, 1)
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("*.o\n/build/\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	var g errgroup.Group
	g.SetLimit(4)
	for leaf := range leaves {
		g.Go(func() error {
			dir := filepath.Join(root, fmt.Sprintf("p%02d", leaf%10), fmt.Sprintf("q%02d", leaf/10%10), fmt.Sprintf("r%04d", leaf))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			for i := range perDir {
				name := filepath.Join(dir, fmt.Sprintf("file%03d.go", i))
				if err := os.WriteFile(name, []byte(name[len(root):]), 0o644); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
}

// baselineWalk is the single-threaded reference: filepath.WalkDir plus one
// Lstat per entry, the information the walker gathers.
func baselineWalk(root string) (int, error) {
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if _, err := os.Lstat(p); err != nil {
			return err
		}
		n++
		return nil
	})
	return n, err
}

// BenchmarkWalk times the parallel walker and the single-threaded baseline
// on the same tree in the same run and reports the speedup.
//
//	go test ./walker -run '^$' -bench Walk -benchtime 5x
func BenchmarkWalk(b *testing.B) {
	root := b.TempDir()
	genBenchTree(b, root, *benchFiles)
	visit := func(_ context.Context, d *Dir, sub map[string]int) (int, error) {
		n := len(d.Entries)
		for _, v := range sub {
			n += v
		}
		return n, nil
	}
	var walkerNs, baseNs atomic.Int64
	// Warm the page cache so neither side pays for cold metadata.
	if _, err := baselineWalk(root); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		base, err := baselineWalk(root)
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		got, _, err := Walk(context.Background(), root, Options{Profile: "none", Workers: *benchWorkers}, visit)
		if err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if got != base-1 { // the baseline counts the root too
			b.Fatalf("walker saw %d entries, baseline %d", got, base-1)
		}
		baseNs.Add(int64(t1.Sub(t0)))
		walkerNs.Add(int64(t2.Sub(t1)))
	}
	w, base := float64(walkerNs.Load())/float64(b.N), float64(baseNs.Load())/float64(b.N)
	b.ReportMetric(w/1e6, "walker-ms/op")
	b.ReportMetric(base/1e6, "walkdir-ms/op")
	b.ReportMetric(base/w, "speedup")
}
