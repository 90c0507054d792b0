package engine_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ckpt/ckpt/bench/corpus"
	"github.com/ckpt/ckpt/engine"
)

var (
	benchFiles  = flag.Int("engine.bench-files", 5000, "files in the generated benchmark workspace")
	benchWatch  = flag.Bool("engine.bench-watch", false, "open the benchmark engines with Options.Watch, as a resident server does")
	benchCorpus = flag.String("engine.bench-corpus", "", "copy this directory as the benchmark workspace (a Go module cache, say) instead of generating one")
	benchGap    = flag.Duration("engine.bench-gap", 0, "untimed pause between an edit and its save, as a host's tool call returns before it checkpoints")
)

// benchWorkspace generates a corpus of *benchFiles files (the bench
// package's monorepo mix, without the 20 MiB files), or copies
// *benchCorpus, and opens an engine on it with the Cline profile. The
// store is outside the workspace.
func benchWorkspace(b *testing.B) (*corpus.Manifest, *engine.Engine) {
	b.Helper()
	dir := b.TempDir()
	ws := filepath.Join(dir, "ws")
	var m *corpus.Manifest
	var err error
	if *benchCorpus != "" {
		m, err = corpus.Copy(context.Background(), *benchCorpus, ws)
	} else {
		m, err = corpus.Generate(context.Background(), ws, corpus.Config{Files: *benchFiles, Seed: 1})
	}
	if err != nil {
		b.Fatal(err)
	}
	e := openBench(b, m.Root, filepath.Join(dir, "store"))
	return m, e
}

func openBench(b *testing.B, ws, store string) *engine.Engine {
	b.Helper()
	e, err := engine.Open(context.Background(), ws, engine.Options{StoreDir: store, Profile: "cline", Watch: *benchWatch})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	return e
}

func benchSave(b *testing.B, e *engine.Engine) *engine.SaveResult {
	b.Helper()
	r, err := e.Save(context.Background(), engine.SaveOptions{Message: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// BenchmarkSaveFirst times a save into an empty store: every captured byte
// is read, hashed and compressed.
//
//	go test ./engine -run '^$' -bench SaveFirst -benchtime 3x
func BenchmarkSaveFirst(b *testing.B) {
	m, _ := benchWorkspace(b)
	b.SetBytes(m.Bytes)
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		store, err := os.MkdirTemp(b.TempDir(), "store")
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		e, err := engine.Open(context.Background(), m.Root, engine.Options{StoreDir: store, Profile: "cline"})
		if err != nil {
			b.Fatal(err)
		}
		benchSave(b, e)
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSaveNoChange times a save that finds nothing changed: one stat
// per file against the stat cache, no content read, nothing created.
func BenchmarkSaveNoChange(b *testing.B) {
	_, e := benchWorkspace(b)
	benchSave(b, e)
	for b.Loop() {
		if r := benchSave(b, e); r.Created {
			b.Fatal("a save with nothing changed created a checkpoint")
		}
	}
}

// BenchmarkSaveAfterEdits times a save after an agent-like change of 100
// edited and 20 added files; -engine.bench-gap leaves a watched engine
// that long to read ahead before the save (save.Prefetcher).
func BenchmarkSaveAfterEdits(b *testing.B) {
	m, e := benchWorkspace(b)
	benchSave(b, e)
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		if _, err := corpus.Mutate(m, uint64(i), 100, 20); err != nil {
			b.Fatal(err)
		}
		time.Sleep(*benchGap)
		b.StartTimer()
		if r := benchSave(b, e); !r.Created {
			b.Fatal("a save after edits created nothing")
		}
	}
}

// editedPair saves the corpus, applies the 100+20 change and saves again.
func editedPair(b *testing.B) (*engine.Engine, string, string) {
	b.Helper()
	m, e := benchWorkspace(b)
	before := benchSave(b, e)
	if _, err := corpus.Mutate(m, 1, 100, 20); err != nil {
		b.Fatal(err)
	}
	after := benchSave(b, e)
	return e, before.ID.String(), after.ID.String()
}

// BenchmarkRestore times restores that alternate between two checkpoints
// 120 files apart, backup checkpoint included, and checks that only those
// files are written.
func BenchmarkRestore(b *testing.B) {
	e, before, after := editedPair(b)
	targets := [2]string{before, after}
	for i := 0; b.Loop(); i++ {
		r, err := e.Restore(context.Background(), targets[i%2], engine.RestoreOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if n := len(r.Written) + len(r.Deleted); n != 120 {
			b.Fatalf("restore wrote or deleted %d files, want 120", n)
		}
	}
}

// BenchmarkDiff times the diff of two checkpoints 120 files apart, reading
// both sides of every change as a host showing the diff does.
func BenchmarkDiff(b *testing.B) {
	e, before, after := editedPair(b)
	ctx := context.Background()
	for b.Loop() {
		d, err := e.Diff(ctx, before, after, engine.DiffOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if len(d.Changes) != 120 {
			b.Fatalf("diff found %d changes, want 120", len(d.Changes))
		}
		for _, c := range d.Changes {
			for _, side := range []bool{false, true} {
				if _, err := d.Content(c, side); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}
