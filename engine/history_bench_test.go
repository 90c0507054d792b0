package engine_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ckpt/ckpt/bench/corpus"
	"github.com/ckpt/ckpt/engine"
)

var benchCheckpoints = flag.Int("engine.bench-checkpoints", 200, "checkpoints in the history that BenchmarkHistory searches")

// BenchmarkHistory times `ckpt log PATH` over a long task: after the first
// save, *benchCheckpoints checkpoints of agent-like edits (3 files each, one
// hot file in every tenth). The log of one file, of that file's directory
// and of the whole workspace compare subtree hashes along the chain, so the
// first two read only the trees on the path's way.
//
//	go test ./engine -run '^$' -bench History -benchtime 5x \
//	    -engine.bench-files 100000 -engine.bench-checkpoints 5000 -engine.bench-watch
func BenchmarkHistory(b *testing.B) {
	m, e := benchWorkspace(b)
	ctx := context.Background()
	benchSave(b, e)
	hot := m.Text[len(m.Text)/2]
	for i := range *benchCheckpoints {
		if _, err := corpus.Mutate(m, uint64(i), 3, 0); err != nil {
			b.Fatal(err)
		}
		if i%10 == 0 {
			f, err := os.OpenFile(filepath.Join(m.Root, hot), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(f, "// step %d\n", i)
			f.Close()
		}
		benchSave(b, e)
	}
	for _, c := range []struct{ name, path string }{
		{"file", hot},
		{"dir", filepath.ToSlash(filepath.Dir(hot))},
		{"workspace", ""},
	} {
		b.Run(c.name, func(b *testing.B) {
			var paths []string
			if c.path != "" {
				paths = []string{c.path}
			}
			var h *engine.History
			for b.Loop() {
				var err error
				if h, err = e.History(ctx, engine.HistoryOptions{Paths: paths}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(h.Entries)), "entries")
			b.ReportMetric(float64(h.Checkpoints), "compared")
			b.ReportMetric(float64(h.TreesRead), "trees-read")
		})
	}
}
