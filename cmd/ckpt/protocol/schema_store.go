package protocol

import (
	"time"

	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/lossless"
)

// DropJSON is the drop command's JSON shape.
type DropJSON struct {
	Task           string   `json:"task"`
	Head           string   `json:"head"`
	Checkpoints    []string `json:"checkpoints"`
	ExclusiveBytes int64    `json:"exclusive_bytes"`
}

// DropView is the drop command's JSON shape of res.
func DropView(res *engine.DropResult) DropJSON {
	ids := make([]string, len(res.Checkpoints))
	for i, id := range res.Checkpoints {
		ids[i] = id.String()
	}
	return DropJSON{Task: res.Task, Head: res.Head.Text(), Checkpoints: ids, ExclusiveBytes: res.ExclusiveBytes}
}

// GCJSON is the gc command's JSON shape.
type GCJSON struct {
	Policy             PolicyJSON    `json:"policy"`
	Dropped            []DroppedJSON `json:"dropped"`
	CheckpointsDeleted int           `json:"checkpoints_deleted"`
	TreesDeleted       int           `json:"trees_deleted"`
	BlobsDeleted       int           `json:"blobs_deleted"`
	DirCachesDropped   int           `json:"dir_caches_dropped"`
	PacksRewritten     int           `json:"packs_rewritten"`
	PacksRemoved       int           `json:"packs_removed"`
	PacksTruncated     int           `json:"packs_truncated"`
	BytesCopied        int64         `json:"bytes_copied"`
	BytesBefore        int64         `json:"bytes_before"`
	BytesAfter         int64         `json:"bytes_after"`
	Reclaimed          int64         `json:"reclaimed"`
	DurationMs         int64         `json:"duration_ms"`
}

type PolicyJSON struct {
	KeepLast int   `json:"keep_last"`
	MaxAgeMs int64 `json:"max_age_ms"`
	MaxSize  int64 `json:"max_size"`
}

type DroppedJSON struct {
	ID     string    `json:"id"`
	Task   string    `json:"task"`
	Seq    uint64    `json:"seq"`
	Time   time.Time `json:"time"`
	Kind   string    `json:"kind"`
	Reason string    `json:"reason"`
}

// GCView is the gc command's JSON shape of res.
func GCView(res *engine.GCResult) GCJSON {
	out := GCJSON{
		Policy:             PolicyJSON{KeepLast: res.Policy.KeepLast, MaxAgeMs: res.Policy.MaxAge.Milliseconds(), MaxSize: res.Policy.MaxSize},
		Dropped:            make([]DroppedJSON, 0, len(res.Dropped)),
		CheckpointsDeleted: res.CheckpointsDeleted, TreesDeleted: res.TreesDeleted, BlobsDeleted: res.BlobsDeleted,
		DirCachesDropped: res.DirCachesDropped, PacksRewritten: res.PacksRewritten, PacksRemoved: res.PacksRemoved,
		PacksTruncated: res.PacksTruncated, BytesCopied: res.BytesCopied, BytesBefore: res.PackBytesBefore,
		BytesAfter: res.PackBytesAfter, Reclaimed: res.Reclaimed(), DurationMs: res.Duration.Milliseconds(),
	}
	for _, d := range res.Dropped {
		out.Dropped = append(out.Dropped, DroppedJSON{d.ID.String(), d.Task, d.Seq, d.Time, string(d.Kind), d.Reason})
	}
	return out
}

// VerifyView is the verify command's JSON shape of rep, without its error.
func VerifyView(rep *engine.VerifyReport) VerifyJSON {
	out := VerifyJSON{OK: rep.OK(), Quick: rep.Quick, Checkpoints: rep.Checkpoints, Trees: rep.Trees, Blobs: rep.Blobs,
		Locators: rep.Locators, Packs: rep.Packs, BytesHashed: rep.BytesHashed, Problems: make([]ProblemJSON, 0, len(rep.Problems))}
	for _, p := range rep.Problems {
		out.Problems = append(out.Problems, ProblemJSON{p.Checkpoint.Text(), p.Task, p.Seq, p.Path, lossless.Base64(p.Path), p.Object.Text(), p.Kind, p.Message})
	}
	return out
}

// VerifyJSON is the verify command's JSON shape.
type VerifyJSON struct {
	OK          bool          `json:"ok"`
	Quick       bool          `json:"quick"`
	Checkpoints int           `json:"checkpoints"`
	Trees       int           `json:"trees"`
	Blobs       int           `json:"blobs"`
	Locators    int           `json:"locators"`
	Packs       int           `json:"packs"`
	BytesHashed int64         `json:"bytes_hashed"`
	Problems    []ProblemJSON `json:"problems"`
	Error       *ErrorBody    `json:"error,omitempty"`
}

type ProblemJSON struct {
	Checkpoint string  `json:"checkpoint"`
	Task       string  `json:"task"`
	Seq        uint64  `json:"seq"`
	Path       string  `json:"path"`
	PathBase64 *string `json:"path_base64,omitempty"` // path's bytes when it is not valid UTF-8 (package lossless)
	Object     string  `json:"object"`
	Kind       string  `json:"kind"`
	Message    string  `json:"message"`
}

// StoreStatsJSON is the stats command's JSON shape.
type StoreStatsJSON struct {
	DiskBytes        int64      `json:"disk_bytes"`
	IndexBytes       int64      `json:"index_bytes"`
	PackBytes        int64      `json:"pack_bytes"`
	LiveBytes        int64      `json:"live_bytes"`
	LiveFraction     float64    `json:"live_fraction"`
	PackCount        int        `json:"pack_count"`
	Packs            []PackJSON `json:"packs"`
	Checkpoints      int        `json:"checkpoints"`
	Trees            int        `json:"trees"`
	Blobs            int        `json:"blobs"`
	LogicalBytes     int64      `json:"logical_bytes"`
	UniqueBytes      int64      `json:"unique_bytes"`
	StoredBytes      int64      `json:"stored_bytes"`
	DedupRatio       float64    `json:"dedup_ratio"`
	CompressionRatio float64    `json:"compression_ratio"`
	// DeferredPacks and DeferredBytes are the packs a first save stored
	// uncompressed, still waiting for compression.
	DeferredPacks int   `json:"deferred_packs"`
	DeferredBytes int64 `json:"deferred_bytes"`
	// BackgroundPID is the process compressing them (the CLI's
	// background-recompress), when one runs.
	BackgroundPID int             `json:"background_pid,omitempty"`
	Tasks         []TaskStatsJSON `json:"tasks"`
	// Watcher is the change watcher of the engine that answered: a
	// server's (serve, mcp, serve --listen); omitted when none runs.
	Watcher *WatcherJSON `json:"watcher,omitempty"`
}

// WatcherJSON is a server's change watcher (engine.WatchStats).
type WatcherJSON struct {
	// Backend is "inotify", "ReadDirectoryChangesW", "FSEvents", or "none"
	// (every save walks the workspace), and Fallback then says why.
	Backend     string `json:"backend"`
	Fallback    string `json:"fallback,omitempty"`
	Provisional bool   `json:"provisional"`
	Watches     int    `json:"watches"`
	Unwatched   int    `json:"unwatched"` // directories walked at every save
	Overflows   int    `json:"overflows"`
	// Reverified counts the re-verifications run, Missed the changes they
	// found that no event had reported (each also sent as missedChanges).
	Reverified int `json:"reverified"`
	Missed     int `json:"missed"`
}

// WatcherView is the JSON shape of an engine's WatchStats; nil when it
// has no watcher (ok false).
func WatcherView(w engine.WatchStats, ok bool) *WatcherJSON {
	if !ok {
		return nil
	}
	v := WatcherJSON(w)
	return &v
}

type PackJSON struct {
	Pack      uint32 `json:"pack"`
	Bytes     int64  `json:"bytes"`
	LiveBytes int64  `json:"live_bytes"`
}

type TaskStatsJSON struct {
	Name           string `json:"name"`
	Checkpoints    int    `json:"checkpoints"`
	LogicalBytes   int64  `json:"logical_bytes"`
	ExclusiveBytes int64  `json:"exclusive_bytes"`
}

// StoreStatsView is the stats command's JSON shape of st, of the
// answering engine's watcher (nil: none; see WatcherView) and of
// backgroundPID, the process compressing st's deferred packs (0: none runs).
func StoreStatsView(st *engine.StoreStats, watcher *WatcherJSON, backgroundPID int) StoreStatsJSON {
	out := StoreStatsJSON{Watcher: watcher, DiskBytes: st.DiskBytes, IndexBytes: st.IndexBytes, PackBytes: st.PackBytes,
		LiveBytes: st.LiveBytes, LiveFraction: st.LiveFraction, PackCount: len(st.Packs),
		Packs: make([]PackJSON, 0, len(st.Packs)), Checkpoints: st.Checkpoints, Trees: st.Trees, Blobs: st.Blobs,
		LogicalBytes: st.LogicalBytes, UniqueBytes: st.UniqueBytes, StoredBytes: st.StoredBytes,
		DedupRatio: st.DedupRatio, CompressionRatio: st.CompressionRatio, DeferredPacks: st.DeferredPacks,
		DeferredBytes: st.DeferredBytes, BackgroundPID: backgroundPID, Tasks: make([]TaskStatsJSON, 0, len(st.Tasks))}
	for _, p := range st.Packs {
		out.Packs = append(out.Packs, PackJSON(p))
	}
	for _, t := range st.Tasks {
		out.Tasks = append(out.Tasks, TaskStatsJSON(t))
	}
	return out
}

// TasksAutoJSON is the tasks command's JSON shape: the tasks, and the
// automatic push's state when a server started with --push runs it.
type TasksAutoJSON struct {
	Tasks    []TaskJSON    `json:"tasks"`
	AutoPush *AutoPushJSON `json:"auto_push,omitempty"`
}

// AutoPushJSON is the state of serve --push.
type AutoPushJSON struct {
	Remote    string     `json:"remote"`
	Pending   []string   `json:"pending"`
	LastPush  *time.Time `json:"last_push,omitempty"`
	LastError string     `json:"last_error,omitempty"`
	Failures  int        `json:"failures"`
	NextRetry *time.Time `json:"next_retry,omitempty"`
}

func AutoPushView(st *engine.AutoPushStatus) *AutoPushJSON {
	if st == nil {
		return nil
	}
	v := &AutoPushJSON{Remote: st.Remote, Pending: st.Pending, LastError: st.LastError, Failures: st.Failures}
	if v.Pending == nil {
		v.Pending = []string{}
	}
	if !st.LastPush.IsZero() {
		v.LastPush = &st.LastPush
	}
	if !st.NextRetry.IsZero() {
		v.NextRetry = &st.NextRetry
	}
	return v
}
