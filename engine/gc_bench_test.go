package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/objects"
)

// Size of the GC benchmark's store: benchCheckpoints checkpoints of a tree
// of benchDirs × benchFiles files, each checkpoint rewriting one file.
const (
	benchDirs        = 100
	benchFiles       = 100
	benchCheckpoints = 1000
)

// historyShape sizes a generated history: checkpoints checkpoints of a
// tree of dirs × files files, each checkpoint rewriting one file.
type historyShape struct{ dirs, files, checkpoints int }

// buildBenchStore writes the benchmark's history (see buildHistoryStore).
func buildBenchStore(b *testing.B) (store, ws string) {
	return buildHistoryStore(b, Options{}, historyShape{benchDirs, benchFiles, benchCheckpoints})
}

// buildHistoryStore writes a history of the given shape straight through
// the index and blob store of an Engine opened with opts (a save per
// checkpoint would walk the whole tree each time) and returns the store
// directory and workspace.
func buildHistoryStore(b testing.TB, opts Options, shape historyShape) (store, ws string) {
	ws, store = b.TempDir(), filepath.Join(b.TempDir(), "store")
	opts.StoreDir = store
	e, err := Open(context.Background(), ws, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	blobs := e.blobs.NewBatch()
	defer blobs.Close()
	file := func(d, i, v int) objects.Entry {
		c := fmt.Sprintf("dir %d file %d version %d\n%s", d, i, v, strings.Repeat(fmt.Sprint(d*i+v), 40))
		id, err := blobs.PutBytes([]byte(c))
		if err != nil {
			b.Fatal(err)
		}
		return objects.Entry{Name: fmt.Sprintf("f%03d", i), Kind: objects.KindFile, Mode: 0o644, Size: int64(len(c)), ID: id}
	}
	dirs := make([]objects.Tree, shape.dirs)
	for d := range dirs {
		for i := range shape.files {
			dirs[d].Entries = append(dirs[d].Entries, file(d, i, 0))
		}
	}
	batch := e.db.NewBatch()
	root := objects.Tree{Entries: make([]objects.Entry, shape.dirs)}
	putDir := func(d int) {
		id, err := batch.PutTree(dirs[d])
		if err != nil {
			b.Fatal(err)
		}
		root.Entries[d] = objects.Entry{Name: fmt.Sprintf("d%03d", d), Kind: objects.KindDir, Mode: 0o755, ID: id}
	}
	for d := range dirs {
		putDir(d)
	}
	var parent objects.ID
	start := time.Now().Add(-time.Duration(shape.checkpoints) * time.Minute)
	for k := range shape.checkpoints {
		if k > 0 {
			d, i := k%shape.dirs, (k/shape.dirs)%shape.files
			dirs[d].Entries[i] = file(d, i, k)
			putDir(d)
		}
		rootID, err := batch.PutTree(root)
		if err != nil {
			b.Fatal(err)
		}
		cp := index.Checkpoint{Parent: parent, Task: DefaultTask, Seq: uint64(k + 1), Root: rootID,
			Time: start.Add(time.Duration(k) * time.Minute), Kind: index.KindSave}
		if parent, err = batch.PutCheckpoint(cp); err != nil {
			b.Fatal(err)
		}
	}
	batch.SetTaskHead(DefaultTask, index.TaskHead{Head: parent, LastSeq: uint64(shape.checkpoints)})
	placements, err := blobs.Sync()
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range placements {
		batch.PutLocator(p.ID, p.Loc)
	}
	if err := batch.Commit(); err != nil {
		b.Fatal(err)
	}
	batch.Close()
	return store, ws
}

// BenchmarkGC collects a store of 1,000 checkpoints of a 10k-file tree down
// to its last 100 checkpoints, rewriting every pack with dead records.
func BenchmarkGC(b *testing.B) {
	template, ws := buildBenchStore(b)
	var reclaimed, dropped int64
	for b.Loop() {
		b.StopTimer()
		store := filepath.Join(b.TempDir(), "store")
		copyDir(b, template, store)
		e, err := Open(context.Background(), ws, Options{StoreDir: store})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := e.GC(context.Background(), GCOptions{Policy: &RetentionPolicy{KeepLast: 100}, RewriteBelow: 1})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		reclaimed, dropped = res.Reclaimed(), int64(len(res.Dropped))
		e.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(reclaimed), "B-reclaimed")
	b.ReportMetric(float64(dropped), "dropped")
}
