package engine

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ckpt/ckpt/internal/objects"
)

// StoreStats describes a store's size and how well it deduplicates and
// compresses.
type StoreStats struct {
	DiskBytes  int64 // every file under the store directory
	IndexBytes int64 // the Pebble index
	PackBytes  int64 // the pack files
	Packs      []PackStats

	// LiveBytes is the pack bytes (records, headers included) that the
	// checkpoints reference; LiveFraction = LiveBytes / PackBytes.
	LiveBytes    int64
	LiveFraction float64

	Checkpoints int
	Trees       int
	Blobs       int // distinct blobs and chunks reachable

	// LogicalBytes is what the checkpoints hold if each were written out:
	// the sizes of their files and symlinks, summed over checkpoints.
	LogicalBytes int64
	// UniqueBytes is the raw content stored once: the distinct plain blobs
	// and chunks reachable (a chunked file counts through its chunks).
	UniqueBytes int64
	// StoredBytes is UniqueBytes as stored: the payloads after compression.
	StoredBytes int64
	// DedupRatio = LogicalBytes / UniqueBytes; CompressionRatio =
	// UniqueBytes / StoredBytes. Both are 0 for an empty store.
	DedupRatio       float64
	CompressionRatio float64

	Tasks []TaskStats
}

// PackStats is one pack file and the bytes of it still referenced.
type PackStats struct {
	Pack      uint32
	Bytes     int64
	LiveBytes int64
}

// TaskStats is one task's share of the store.
type TaskStats struct {
	Name         string
	Checkpoints  int
	LogicalBytes int64
	// ExclusiveBytes is the pack bytes only this task's checkpoints
	// reference: what dropping it frees.
	ExclusiveBytes int64
}

// Stats measures the store. It reads every tree once and no blob content;
// it is serialised with the Engine's writes.
func (e *Engine) Stats(ctx context.Context) (*StoreStats, error) {
	st, err := e.stats(ctx)
	return st, translate(err)
}

func (e *Engine) stats(ctx context.Context) (*StoreStats, error) {
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	g, err := e.loadGraph(ctx, nil, nil)
	if err != nil {
		return nil, storeError(err, e.storeDir)
	}
	st := &StoreStats{Checkpoints: len(g.cps), Trees: len(g.trees), Blobs: len(g.blobs)}
	if err := e.diskUsage(g, st); err != nil {
		return nil, err
	}
	for _, b := range g.blobs {
		if b.missing || b.loc.Flags&objects.FlagChunked != 0 {
			continue
		}
		st.UniqueBytes += b.loc.Size
		st.StoredBytes += int64(b.loc.Length) - objects.RecordHeaderSize
	}
	memo := map[objects.ID]int64{}
	exclusive := g.exclusiveBytes()
	byTask := map[string]*TaskStats{}
	for _, name := range g.tasks {
		st.Tasks = append(st.Tasks, TaskStats{Name: name, ExclusiveBytes: exclusive[name]})
	}
	for i := range st.Tasks {
		byTask[st.Tasks[i].Name] = &st.Tasks[i]
	}
	for _, c := range g.cps {
		n := g.logicalSize(c.cp.Root, memo)
		st.LogicalBytes += n
		if t := byTask[c.cp.Task]; t != nil {
			t.Checkpoints++
			t.LogicalBytes += n
		}
	}
	st.DedupRatio = ratio(st.LogicalBytes, st.UniqueBytes)
	st.CompressionRatio = ratio(st.UniqueBytes, st.StoredBytes)
	st.LiveFraction = ratio(st.LiveBytes, st.PackBytes)
	return st, nil
}

// diskUsage fills the on-disk sizes: the store directory, the packs and
// the live bytes of each.
func (e *Engine) diskUsage(g *refGraph, st *StoreStats) error {
	err := filepath.WalkDir(e.storeDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return nil // removed while walking (a pebble compaction)
		}
		st.DiskBytes += fi.Size()
		if rel, _ := filepath.Rel(e.storeDir, p); filepath.Dir(rel) == "index" {
			st.IndexBytes += fi.Size()
		}
		return nil
	})
	if err != nil {
		return err
	}
	live := map[uint32]int64{}
	for _, b := range g.blobs {
		if !b.missing {
			live[b.loc.Pack] += int64(b.loc.Length)
		}
	}
	nums, err := e.blobs.Packs()
	if err != nil {
		return err
	}
	for _, n := range nums {
		fi, err := os.Stat(e.blobs.PackPath(n))
		if err != nil {
			return err
		}
		ps := PackStats{Pack: n, Bytes: fi.Size(), LiveBytes: live[n]}
		if ps.LiveBytes > 0 {
			ps.LiveBytes += objects.PackHeaderSize
		}
		st.Packs = append(st.Packs, ps)
		st.PackBytes += ps.Bytes
		st.LiveBytes += ps.LiveBytes
	}
	return nil
}

func ratio(a, b int64) float64 {
	if a == 0 || b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// exclusiveByTask returns the pack bytes only each task references.
func (e *Engine) exclusiveByTask(ctx context.Context) (map[string]int64, error) {
	g, err := e.loadGraph(ctx, nil, nil)
	if err != nil {
		return nil, storeError(err, e.storeDir)
	}
	return g.exclusiveBytes(), nil
}
