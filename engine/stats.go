package engine

import "context"

// StoreStats describes a store's size and how well it deduplicates and
// compresses.
type StoreStats struct {
	DiskBytes  int64 // every file under the store directory
	IndexBytes int64 // the Pebble index
	PackBytes  int64 // the pack files
	Packs      []PackStats
	// DeferredPacks are packs a first save with Options.DeferCompression
	// stored uncompressed, DeferredBytes their size on disk: what is
	// waiting for Recompress (or GC) to compress it.
	DeferredPacks int
	DeferredBytes int64

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
	return st, translate(err, e.storeDir)
}

func (e *Engine) stats(ctx context.Context) (*StoreStats, error) {
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	m, err := e.maintStore().Sizes(ctx)
	if err != nil {
		return nil, err
	}
	st := &StoreStats{DiskBytes: m.DiskBytes, IndexBytes: m.IndexBytes, PackBytes: m.PackBytes,
		LiveBytes: m.LiveBytes, Checkpoints: m.Checkpoints, Trees: m.Trees, Blobs: m.Blobs,
		LogicalBytes: m.LogicalBytes, UniqueBytes: m.UniqueBytes, StoredBytes: m.StoredBytes}
	for _, p := range m.Packs {
		st.Packs = append(st.Packs, PackStats(p))
	}
	if st.DeferredBytes, st.DeferredPacks, err = e.Deferred(); err != nil {
		return nil, err
	}
	for _, t := range m.Tasks {
		st.Tasks = append(st.Tasks, TaskStats(t))
	}
	st.DedupRatio = ratio(st.LogicalBytes, st.UniqueBytes)
	st.CompressionRatio = ratio(st.UniqueBytes, st.StoredBytes)
	st.LiveFraction = ratio(st.LiveBytes, st.PackBytes)
	return st, nil
}

func ratio(a, b int64) float64 {
	if a == 0 || b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// exclusiveByTask returns the pack bytes only each task references.
func (e *Engine) exclusiveByTask(ctx context.Context) (map[string]int64, error) {
	return e.maintStore().ExclusiveByTask(ctx)
}
