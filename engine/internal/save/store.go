// Package save holds the mechanics of a save: the scan that turns the
// workspace into trees (reading only files whose stat changed since the
// stat cache recorded them), and the commit that makes a checkpoint
// durable (packs synced first, then one index batch). Package engine
// decides what to save and owns the task chains.
package save

import (
	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/objects"
	"github.com/ckpt/ckpt/walker"
)

// Store is what a save works on: a workspace and the store it saves into.
type Store struct {
	Workspace string // canonical absolute path
	// Roots, when set, makes the workspace multi-root: Workspace is then
	// only its identity, and each root is scanned under its name (see
	// Root). A multi-root Store has no Tracker.
	Roots []Root
	DB    *index.DB
	Blobs *objects.Store
	Walk  walker.Options
	// FlushEntries, when positive, replaces defaultFlushEntries (tests lower it).
	FlushEntries int
	// AfterFlush, when set (by tests), runs after each flush of a storing scan.
	AfterFlush func()
	// CarryModes: the file system has no permission bits (Windows), so a
	// scan takes each entry's mode from its base checkpoint (see carriedMode).
	CarryModes bool
	// AfterScan, when set (by tests), receives every snapshot a scan returns.
	AfterScan func(*Snapshot)
	// BeforeRead, when set (by tests), is called with each file's path
	// before a scan opens it to read it: once per file, however many reads
	// it takes, and from several goroutines at once in a wide directory.
	BeforeRead func(rel string)
	// Tracker, when set, lets a scan skip the directories its watcher
	// vouches for; nil walks everything.
	Tracker *Tracker
	// StatCacheReadOnly: the Store's scans read the stat cache, and its
	// commits and flushes write none of it, neither records nor the
	// removal of those of directories a scan did not find. For a Store
	// whose Walk differs from the one that writes the cache (the watched
	// one): a record vouches for a directory's tree under the rules that
	// made it, and a directory these rules exclude is not gone.
	StatCacheReadOnly bool
	// DeferFirstCompression: the first save into an empty store writes its
	// blobs uncompressed and marks its packs for a later collection to
	// compress (objects.Batch.DeferCompression); later saves compress as
	// they write, at the store's level.
	DeferFirstCompression bool
}

func (st *Store) flushSize() int {
	if st.FlushEntries > 0 {
		return st.FlushEntries
	}
	return defaultFlushEntries
}
