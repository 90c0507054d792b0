package watch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// benchTree creates 10k directories: 10 × 10 × 100, a file in each leaf.
func benchTree(b *testing.B) (string, []string) {
	root := b.TempDir()
	var dirs []string
	for i := range 10 {
		for j := range 10 {
			for k := range 100 {
				rel := fmt.Sprintf("p%d/q%d/r%d", i, j, k)
				p := filepath.Join(root, filepath.FromSlash(rel))
				if err := os.MkdirAll(p, 0o755); err != nil {
					b.Fatal(err)
				}
				os.WriteFile(filepath.Join(p, "f"), nil, 0o644)
				dirs = append(dirs, rel)
			}
			dirs = append(dirs, fmt.Sprintf("p%d/q%d", i, j))
		}
		dirs = append(dirs, fmt.Sprintf("p%d", i))
	}
	return root, dirs
}

// BenchmarkChangesNoChange times Changes on a watched tree of 10k
// directories where nothing changed, and reports the Go heap per watch.
//
//	go test ./internal/watch -run '^$' -bench ChangesNoChange -benchmem
func BenchmarkChangesNoChange(b *testing.B) {
	root, dirs := benchTree(b)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	w, err := Start(context.Background(), root, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	for _, d := range dirs {
		w.Watch(d)
	}
	w.Changes()
	w.Changes()
	runtime.GC()
	runtime.ReadMemStats(&after)
	st := w.Stats()
	if st.Watches != len(dirs)+1 {
		b.Fatalf("stats %+v, want %d watches", st, len(dirs)+1)
	}
	for b.Loop() {
		if c := w.Changes(); c.All || len(c.Dirty) > 0 {
			b.Fatalf("unchanged tree: %+v", c)
		}
	}
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(st.Watches), "heap-B/watch")
	b.ReportMetric(float64(st.Watches), "watches")
}
