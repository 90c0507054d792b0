package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/ckpt/ckpt/engine/internal/save"
	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/internal/storefs"
	"github.com/ckpt/ckpt/objects"
	"github.com/ckpt/ckpt/walker"
)

// Engine is an open checkpoint store bound to one workspace. It holds the
// store's OS lock from Open to Close, so one Engine per store per machine is
// active at a time; other processes wait up to Options.LockTimeout. An Engine
// is safe for concurrent use: read operations run in parallel, operations that
// change the workspace or the task chains (Save, Restore, Drop, GC) are
// serialised.
type Engine struct {
	workspace string // canonical absolute path; a multi-root workspace's identity (see Root)
	places    places // where workspace-relative paths live
	names     nameProbes
	storeDir  string
	fs        vfs.FS // under the store directory (storefs.OS but in tests)
	opts      Options
	lock      *storeLock
	db        *index.DB
	blobs     *objects.Store
	save      *save.Store // the save mechanics over db and blobs

	// writeMu serialises operations that change the store or the workspace.
	writeMu sync.Mutex
	// reverify re-verifies what the watcher vouches for; nil without one.
	reverify *reverifier
	// refresh refreshes the stat cache after a restore; nil without a watcher.
	refresh *refresher
	// presave stores what the watcher heard written ahead of the save that
	// captures it; nil without a watcher. presaved counts the bytes it
	// read and hashed since the last save, and lastTask is the task that
	// save (or restore) was of; both guarded by writeMu.
	presave  *refresher
	presaved uint64
	lastTask string
	// background lets the work reverify and refresh do under writeMu give
	// way to a write.
	background yielder
	// prefetch reads ahead what the watcher heard written; nil without one.
	prefetch *save.Prefetcher
	// pending is the journal of an interrupted restore (found at Open, or
	// left by a Restore of this Engine), nil when none; guarded by writeMu
	// once Open has returned.
	pending *Journal
	// legacyJournal is what the Engine knows of an older version's journal
	// file (removeLegacyJournal); guarded by writeMu.
	legacyJournal legacyJournalState
	// clearUnsynced is set while the journal's clearing is not known
	// durable (writeClear); syncing counts the goroutines that sync
	// it before letting go of writeMu (unlockWrite), which Close waits for.
	clearUnsynced atomic.Bool
	syncing       sync.WaitGroup
	// run holds the index of the heads' files for the recompression of
	// deferred packs (similar.go): Options.RecompressRun, or the Engine's
	// own. deltaBases holds the bases of the delta records this Engine's
	// slices have read (maint.Store.DeltaBases). Both are built by a
	// run's slices, dropped by the slice that finds no deferred pack left
	// or fails (not by a cancelled one) and by a collection of this
	// Engine, nil otherwise; guarded by writeMu.
	run        *RecompressRun
	deltaBases map[objects.Locator]objects.ID

	// remoteMu guards the automatic push. (The Engine keeps no remote's
	// backend: each fetch has its call's, see backend.)
	remoteMu struct {
		sync.Mutex
		auto *autoPusher // the automatic push, nil when off
	}
}

// Open opens (creating on first use, unless Options.MustExist) the store of workspace and locks it.
// It changes nothing in the workspace: a restore that was interrupted is
// reported by PendingRestore and settled by the first operation that may
// write (see SettleRestore). With Options.Watch it starts the change
// watcher.
// It fails with ErrBadRequest for invalid Options,
// ErrProtected for refused workspaces, a *WorkspaceMismatchError when the
// store records another workspace, ErrStoreHoldsWorkspace when the store is
// the workspace or above it, and a *BusyError (ErrBusy) when another
// holder keeps the lock past the timeout: another process, or an Engine of
// this process that was not closed. With Options.MustExist, a store that
// does not exist is an error wrapping fs.ErrNotExist.
func Open(ctx context.Context, workspace string, opts Options) (*Engine, error) {
	e, err := open(ctx, workspace, opts)
	return e, translate(err, "")
}

func open(ctx context.Context, workspace string, opts Options) (_ *Engine, err error) {
	start := time.Now()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	run := cmp.Or(opts.RecompressRun, new(RecompressRun))
	if err := run.claim(); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			run.open.Store(false)
		}
	}()
	where, err := resolveWorkspace(workspace, opts.Roots)
	if err != nil {
		return nil, err
	}
	ws := where.workspace
	storeDir, err := storeLocation(ws, opts.StoreDir)
	if err != nil {
		return nil, err
	}
	for _, dir := range where.dirs() {
		if err := checkStoreLocation(dir, storeDir); err != nil {
			return nil, err
		}
	}
	fsys := storefs.Or(opts.hooks.storeFS)
	if !opts.MustExist {
		if err := storefs.MkdirAll(fsys, storeDir, 0o700); err != nil {
			return nil, fmt.Errorf("create store %s: %w", storeDir, err)
		}
	}
	lock, err := acquireLock(ctx, filepath.Join(storeDir, lockName), holderOf(opts), opts.lockTimeout(), opts.MustExist)
	if err != nil {
		return nil, err
	}
	if opts.MustExist {
		// Checked under the lock: a store removed while Open waited is not
		// opened (and so not created again) either.
		if _, err := fsys.Stat(filepath.Join(storeDir, "index")); err != nil {
			lock.release()
			return nil, fmt.Errorf("no store at %s: %w", storeDir, fs.ErrNotExist)
		}
	}
	e := &Engine{workspace: ws, places: where, storeDir: storeDir, fs: fsys, opts: opts, lock: lock, run: run}
	created, err := e.openStore()
	if err != nil {
		e.Close()
		return nil, translate(err, storeDir)
	}
	if e.pending, err = readJournal(e.fs, e.storeDir); err != nil {
		e.Close()
		return nil, translate(err, storeDir)
	}
	if opts.Watch && !opts.ReadOnly && where.roots == nil {
		if err := e.startWatch(); err != nil {
			e.Close()
			return nil, translate(err, storeDir)
		}
	}
	ev := Event{Type: EventInitialize, Workspace: ws, Created: created, Duration: time.Since(start)}
	if head, ok, err := e.db.Task(DefaultTask); err == nil && ok {
		ev.BaseHash = ID(head.Head)
	}
	e.emit(ev)
	return e, nil
}

// openStore opens the index and the blob store and checks the store's
// identity. It creates an index only in a store that has no index files
// and no packs: an index missing beside packs, or files without an index,
// is ErrCorrupt and nothing is touched. A writer first checks that the
// store's directories are writable, so that a read-only store fails at
// once instead of deep inside a save.
func (e *Engine) openStore() (created bool, err error) {
	dir := filepath.Join(e.storeDir, "index")
	hasIndex, err := dirHasFiles(e.fs, dir)
	if err != nil {
		return false, fmt.Errorf("open index: %w", err)
	}
	packs, err := listPacks(e.fs, filepath.Join(e.storeDir, "packs"))
	if err != nil {
		return false, fmt.Errorf("open store: %w", err)
	}
	if !hasIndex && len(packs) > 0 {
		return false, objects.MarkCorrupt(fmt.Errorf("index missing but %d packs present", len(packs)))
	}
	if !e.opts.ReadOnly {
		if err := probeWritable(e.fs, e.storeDir, dir, filepath.Join(e.storeDir, "packs")); err != nil {
			return false, err
		}
	}
	// A read-only open of a store that does not exist yet creates it instead.
	db, err := index.Open(dir, index.Options{
		ReadOnly:          e.opts.ReadOnly && hasIndex,
		OnBackgroundError: e.backgroundError,
		FS:                e.fs,
		MemTableSize:      e.opts.hooks.indexMemTableSize,
	})
	if err != nil {
		return false, err
	}
	e.db = db
	if created, err = e.checkIdentity(len(packs)); err != nil {
		return false, err
	}
	// Small blobs are stored in solid group records: a first save of real
	// source is 13-20% smaller at the same speed, and gc regroups the live
	// members of a mostly dead group, so it bounds the store as it does
	// with a record per blob.
	blobs, err := objects.Open(e.storeDir, db, objects.Options{FS: e.fs, Level: e.opts.CompressionLevel, Groups: !e.opts.hooks.ungrouped, PackSize: e.opts.hooks.packSize, ChunkThreshold: e.opts.hooks.chunkThreshold})
	if err != nil {
		return false, err
	}
	e.blobs = blobs
	e.save = &save.Store{
		Workspace: e.workspace, Roots: e.places.saveRoots(), DB: db, Blobs: blobs,
		Walk: walker.Options{
			Profile:     e.opts.Profile,
			Extra:       e.opts.Exclude,
			MaxFileSize: e.opts.maxFileSize(),
			ExcludeDirs: []string{e.storeDir},
		},
		FlushEntries: e.opts.hooks.flushEntries, AfterFlush: e.opts.hooks.afterFlush,
		AfterScan: e.opts.hooks.afterScan, BeforeRead: e.opts.hooks.beforeRead,
		DeferFirstCompression: e.opts.DeferCompression,
		CarryModes:            !fsHasModeBits || e.opts.hooks.carryModes,
	}
	return created, nil
}

// checkIdentity reads the store's Meta, recording it (created) in a new
// store, and refuses a store of another workspace or a newer format.
func (e *Engine) checkIdentity(packs int) (created bool, err error) {
	meta, ok, err := e.db.Meta()
	if err != nil {
		return false, err
	}
	switch {
	case !ok && packs > 0:
		return false, objects.MarkCorrupt(fmt.Errorf("index records no store but %d packs present", packs))
	case !ok:
		b := e.db.NewBatch()
		defer b.Close()
		b.SetMeta(index.Meta{FormatVersion: index.FormatVersion, Workspace: e.workspace, Created: time.Now()})
		if err := b.Commit(); err != nil {
			return false, err
		}
		return true, nil
	case meta.Workspace != e.workspace:
		return false, &WorkspaceMismatchError{Store: e.storeDir, Recorded: meta.Workspace, Workspace: e.workspace}
	case meta.FormatVersion > index.FormatVersion:
		return false, fmt.Errorf("store %s has format %d, newer than this version of ckpt understands (%d)",
			e.storeDir, meta.FormatVersion, index.FormatVersion)
	case meta.FormatVersion < index.FormatVersion && !e.opts.ReadOnly:
		// What this version writes (tree deltas) the older one cannot
		// read: the Meta says so before any of it is written.
		meta.FormatVersion = index.FormatVersion
		b := e.db.NewBatch()
		defer b.Close()
		b.SetMeta(meta)
		return false, b.Commit()
	}
	return false, nil
}

// backgroundError reports an error of the index's background work as an
// error event. It may be called from any goroutine.
func (e *Engine) backgroundError(err error) {
	e.emit(Event{Type: EventError, Err: &BackgroundError{Err: err}})
}

// dirHasFiles reports whether dir exists and holds at least one entry.
func dirHasFiles(fsys vfs.FS, dir string) (bool, error) {
	ents, err := fsys.List(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return len(ents) > 0, err
}

// listPacks returns the pack files in dir (none when dir is missing).
func listPacks(fsys vfs.FS, dir string) ([]string, error) {
	ents, err := fsys.List(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var packs []string
	for _, name := range ents {
		if strings.HasSuffix(name, ".pack") {
			packs = append(packs, name)
		}
	}
	return packs, err
}

// probeWritable creates and removes a file in each of dirs that exists,
// returning ErrNotWritable with the first refusal.
func probeWritable(fsys vfs.FS, dirs ...string) error {
	for _, dir := range dirs {
		if _, err := fsys.Stat(dir); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		name := filepath.Join(dir, fmt.Sprintf(".ckpt-probe-%d", os.Getpid()))
		f, err := fsys.Create(name, vfs.WriteCategoryUnspecified)
		if err == nil {
			err = errors.Join(f.Close(), fsys.Remove(name))
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrNotWritable, err)
		}
	}
	return nil
}

// Close releases the store, once the clearing of a restore's journal, which
// the restore answers before, is synced (it returns the error of a sync that
// failed). It is safe to call more than once.
func (e *Engine) Close() error {
	var errs []error
	e.stopAutoPush()
	e.reverify.close()
	e.refresh.close()
	e.presave.close()
	// After the workers that write: the syncs unlockWrite began end, and
	// a clearing still unsynced (one whose sync failed) is tried again,
	// by the first Close only: once the store's lock is let go, the file
	// may hold another Engine's journal.
	e.syncing.Wait()
	if e.lock != nil && e.clearUnsynced.Load() {
		e.writeMu.Lock()
		errs = append(errs, e.syncClearedJournal())
		e.writeMu.Unlock()
	}
	if e.save != nil && e.save.Tracker != nil {
		errs = append(errs, e.save.Tracker.Close())
		e.save.Tracker = nil
	}
	if e.prefetch != nil { // after the watcher, which hands it paths
		e.prefetch.Close()
		e.prefetch = nil
	}
	if e.blobs != nil {
		errs = append(errs, e.blobs.Close())
		e.blobs = nil
	}
	if e.db != nil {
		errs = append(errs, e.db.Close())
		e.db = nil
	}
	if e.lock != nil {
		errs = append(errs, e.lock.release())
		e.lock = nil
		e.run.open.Store(false) // another open may take the run now
	}
	return errors.Join(errs...)
}

// lockForWrite serialises an operation that changes the store or the
// workspace; it fails on an Engine opened ReadOnly.
func (e *Engine) lockForWrite() (unlock func(), err error) {
	if e.opts.ReadOnly {
		return nil, fmt.Errorf("%w: the store was opened read-only", ErrBadRequest)
	}
	holding := e.background.giveWay()
	e.writeMu.Lock()
	holding()
	// A restore's journal clearing whose sync failed is durable before
	// the next write operation begins, or that operation fails.
	if err := e.syncClearedJournal(); err != nil {
		e.writeMu.Unlock()
		return nil, err
	}
	return e.unlockWrite, nil
}

// unlockWrite ends an operation lockForWrite began. One that cleared a
// restore's journal without syncing it (writeClear) answers first:
// the lock passes to a goroutine that syncs the journal and then lets go,
// so the next write operation begins once the clearing is durable. A sync
// that fails is reported (EventWarning) and tried again when the next
// write operation begins, which fails while it does.
func (e *Engine) unlockWrite() {
	if !e.clearUnsynced.Load() {
		e.writeMu.Unlock()
		return
	}
	e.syncing.Add(1)
	go func() {
		defer e.syncing.Done()
		defer e.writeMu.Unlock()
		if err := e.syncClearedJournal(); err != nil {
			e.emit(Event{Type: EventWarning, Message: err.Error() + "; the next write operation syncs it again first"})
		}
	}()
}

// Workspace returns the canonical absolute path of the workspace; for a
// multi-root Engine, the identity its store records: its roots as a JSON
// array of {"name","dir"} (see Roots).
func (e *Engine) Workspace() string { return e.workspace }

// resolveWorkspace canonicalizes the workspace Open was given: one
// directory, or the roots of a multi-root workspace.
func resolveWorkspace(workspace string, roots []Root) (places, error) {
	if len(roots) == 0 {
		ws, err := canonicalWorkspace(workspace)
		return places{workspace: ws}, err
	}
	if workspace != "" {
		return places{}, fmt.Errorf("%w: give Open a workspace or Options.Roots, not both", ErrBadRequest)
	}
	canon, err := canonicalRoots(roots)
	if err != nil {
		return places{}, err
	}
	return places{workspace: rootsIdentity(canon), roots: canon}, nil
}

// StoreDir returns the store's directory.
func (e *Engine) StoreDir() string { return e.storeDir }

// PendingRestore returns the journal of a restore that was interrupted and
// is not settled yet, or nil. Running Restore again with the same target
// resumes it; any other writing operation settles it first (SettleRestore).
func (e *Engine) PendingRestore() *Journal {
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	return e.pending
}
