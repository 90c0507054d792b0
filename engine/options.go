package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/ckpt/ckpt/engine/internal/restore"
	"github.com/ckpt/ckpt/engine/internal/save"
	"github.com/ckpt/ckpt/internal/osfs"
	"github.com/ckpt/ckpt/objects"
	"github.com/ckpt/ckpt/walker"
)

// DefaultTask is the task used when none is named.
const DefaultTask = "default"

// DefaultLockTimeout is how long Open waits for another process's lock.
const DefaultLockTimeout = 30 * time.Second

// Options configure Open. The zero value is usable.
type Options struct {
	// StoreDir is the store location. Empty: DefaultStoreDir(workspace).
	StoreDir string
	// Profile selects the built-in exclusion list: "default" (also ""),
	// "cline", "roo" or "none"; Open refuses any other with ErrBadRequest.
	Profile string
	// Exclude holds extra gitignore-syntax patterns, relative to the workspace root.
	Exclude []string
	// MaxFileSize skips larger files (reported). 0 means DefaultMaxFileSize;
	// NoMaxFileSize (-1) means no cap; Open refuses other negative values with ErrBadRequest.
	MaxFileSize int64
	// LockTimeout bounds the wait for another holder of the store lock: 0
	// fails at once with a *BusyError naming the holder when the store is
	// busy (as the CLI's --lock-timeout 0 does); a negative value
	// (WaitDefault) waits DefaultLockTimeout. A holder that has not named
	// itself (it is taking or letting go of the lock right now), or one
	// that gives way (Options.GivesWay), is waited for up to two seconds
	// whatever the timeout.
	LockTimeout time.Duration
	// GivesWay says that the Engine gives the store up soon after another
	// process comes to wait for it: it asks Awaited between and during its
	// work and then closes (the ckpt CLI's background recompression). Its
	// lock says so, and an Open that finds the store held by it waits for
	// it up to two seconds even with LockTimeout 0, rather than failing as
	// busy while the holder was about to let go.
	GivesWay bool
	// CompressionLevel: 0 or 1 fastest (default) … 4 best.
	CompressionLevel int
	// DeferCompression makes the first save into an empty store write its
	// blobs uncompressed (and so several times faster: zstd was over half
	// its CPU), marking the packs it wrote; GC, or Recompress, then rewrites
	// them compressed at a higher level (small files in groups), as git
	// keeps a first add as loose objects until gc packs them. Until then the
	// store holds the captured bytes as they are (StoreStats.DeferredBytes).
	// Reads verify either way. RecompressNext does the work one bounded
	// slice of a pack at a time, for a process that runs it while idle; the ckpt CLI and servers
	// turn this on and do so.
	DeferCompression bool
	// RecompressRun, when set, carries a run of RecompressNext slices from
	// one open of the store to the next: a process that gives the store up
	// in the middle of a run and opens it again (the ckpt CLI's background
	// recompression, for each command that waits for the store) passes the
	// same RecompressRun to every open, and the heads' trees are indexed
	// for delta bases once a run instead of once an open. Nil: the Engine
	// keeps its own. One open Engine at a time may use it: Open fails with
	// ErrBadRequest while another open Engine has it.
	RecompressRun *RecompressRun
	// OnEvent, when set, receives lifecycle events. It is called synchronously; keep it quick.
	// Error events for the index's background work (a failed flush or compaction)
	// arrive from the index's own goroutines, so OnEvent must be safe for concurrent use.
	OnEvent func(Event)
	// OnProgress, when set, receives the progress of long scans (save,
	// restore's backup, workspace diffs) at most every ProgressInterval,
	// from whichever goroutine made the progress. Keep it quick.
	OnProgress func(ScanProgress)
	// Now is the clock stamped on checkpoints; nil means time.Now.
	Now func() time.Time
	// ReadOnly opens the store for reading only: Save, Restore, GC, Drop and
	// SetRetention fail with ErrBadRequest, and the index runs no background
	// compaction, so a short-lived reader (list, diff, ...) never pays for
	// the compactions a writer left due. A store that does not exist yet is
	// created all the same.
	ReadOnly bool
	// MustExist opens only a store that exists: where there is none (or it
	// was removed while Open waited for its lock), Open fails with an error
	// wrapping fs.ErrNotExist and creates nothing. For processes that work
	// on a store on its owner's behalf (background compression), which must
	// not bring a deleted store back.
	MustExist bool
	// Watch keeps a change watcher on the workspace for the life of the
	// Engine (see package internal/watch), so a save re-reads only the
	// directories that may have changed since the previous one and reuses
	// the stat cache's tree id for every other: worth it for a long-lived
	// process that saves repeatedly. It never changes what a save captures:
	// whenever the watcher cannot vouch for a directory (queue overflow, a
	// watch the kernel refused, an ignore-rule change, a clock jump) that
	// subtree or the whole workspace is walked as without it. Once the
	// files the watcher heard written have been quiet for some 55 ms, the
	// Engine presaves them (the blobs, trees and stat-cache records a save
	// would store, without a checkpoint), giving way to any write that
	// arrives: the save that follows only records the checkpoint. Ignored
	// on a ReadOnly Engine; on platforms without a scalable watcher every
	// save walks.
	Watch bool
	// Roots, when set, makes the workspace multi-root: Open's workspace
	// argument must then be empty, and one store and one checkpoint cover
	// every root, each under its name (see Root). The store records the
	// set of roots, names and directories: opening it with another set is
	// a *WorkspaceMismatchError. Watch does not apply: every save of a
	// multi-root workspace walks its roots (as a single-root one without a
	// watcher does), reading only files whose stat changed.
	Roots []Root
	// Command describes this process in the lock file ("ckpt save"), shown to processes that wait.
	Command string
	// OpenRemote opens the backend of a remote the store names (AddRemote)
	// as the store records it: by its URL, and for an encrypted remote
	// (r.Key set) through EncryptRemote with the secret r.Key points to.
	// The Engine calls it, with the ctx of the call, when a Restore,
	// Diff, History, Bisect, Cat, ReadState or export needs blobs that a
	// pull left on that remote, once per fetch (a restore fetches once,
	// however many blobs it needs), and closes the backend when that fetch
	// ends; for the contents of a DiffResult read after Diff returns, with
	// the values of Diff's ctx but not its cancellation or deadline. No backend
	// serves another call: not one OpenRemote opened, nor one given to
	// Push or Pull (a Clone's serves its own restore only). So each call
	// reaches the remote with the credentials its ctx gives OpenRemote,
	// as a server that runs commands for several clients needs. Nil:
	// such blobs are reported missing.
	OpenRemote func(ctx context.Context, r RemoteInfo) (Backend, error)

	// hooks are set by this package's tests only.
	hooks testHooks
}

// NoMaxFileSize as Options.MaxFileSize saves files of any size.
const NoMaxFileSize = -1

// DefaultMaxFileSize is the size above which files are skipped unless
// Options.MaxFileSize says otherwise (100 MiB).
const DefaultMaxFileSize = 100 << 20

// testHooks are the Options that exist for this package's tests (fault
// injection, crash points, smaller limits); no caller outside the package
// can set them, and their zero value is what every Engine runs with.
type testHooks struct {
	// arrivalsHeld replaces arrivalsHeld.
	arrivalsHeld int64
	// wrapRestoreFS wraps the file-system seam that restore writes the
	// workspace through (to inject faults).
	wrapRestoreFS func(restore.FS) restore.FS
	// wrapExportFS wraps the seam an export writes its directory through.
	wrapExportFS func(restore.FS) restore.FS
	// probeNames replaces osfs.ProbeNames (to play a
	// case-insensitive or normalizing file system).
	probeNames func(dir string) (osfs.NameRules, error)
	// carryModes makes saves carry modes from the base
	// checkpoint as they do on file systems without permission bits.
	carryModes bool
	// nameProblem replaces osfs.NameProblem (to play
	// Windows's name rules).
	nameProblem func(name string) string
	// storeFS replaces the operating system's file system under every
	// file of the store directory but the lock (packs, index, restore
	// journal): a fault injector or a simulated power cut.
	storeFS vfs.FS
	// gcStep is called before every step of a
	// collection that changes the store: each record copy or regroup, the fsync of the
	// copies, the index commit, each pack removal and truncation.
	gcStep func(op string)
	// recompressSlice replaces maint.DefaultSliceBytes (so that a
	// small deferred pack takes several slices).
	recompressSlice int64
	// flushEntries and afterFlush become save.Store's
	// FlushEntries (the flush size, when positive) and AfterFlush.
	flushEntries int
	afterFlush   func()
	// afterScan and beforeRead become save.Store's AfterScan and BeforeRead.
	afterScan  func(*save.Snapshot)
	beforeRead func(rel string)
	// watchMaxPending replaces defaultWatchMaxPending;
	// watchMaxWatches caps the watcher's kernel watches as a
	// lower fs.inotify.max_user_watches would.
	watchMaxPending, watchMaxWatches int
	// reverifyInterval replaces reverifyInterval.
	reverifyInterval time.Duration
	// beforeRefresh is called by the refresher (refresh.go) with the
	// lock held, before its scan, with the context a write cancels;
	// refreshed is told whether each refresh committed its records.
	beforeRefresh func(ctx context.Context)
	refreshed     func(committed bool)
	// beforePresave and presaved are the same for the presaver
	// (presave.go); presaved gets the bytes each presave read and hashed
	// and the error of its work, if any.
	beforePresave func(ctx context.Context)
	presaved      func(hashed uint64, err error)
	// presaveDelay replaces presaveDelay: a test whose assertions are
	// about what one save's scan did sets it beyond the test's length.
	presaveDelay time.Duration
	// prefetched is told of each stored version the watcher's head start
	// read ahead of a save (save.Prefetcher): the file's path, the
	// version's id, and whether the delta record of the file's content
	// against it was prepared.
	prefetched func(rel string, id objects.ID, prepared bool)
	// packSize replaces the packs' soft size cap (so that
	// small trees fill several packs).
	packSize int64
	// ungrouped stores every blob in a record of its own, as
	// stores written before group records were on (to compare the two).
	ungrouped bool
	// pause, when set, is called at the pause points the ckpttest build
	// tag exposes (see SetTestPause): a test makes an operation wait there
	// for its cancellation.
	pause func(ctx context.Context, point string)
	// indexMemTableSize becomes index.Options.MemTableSize: a few KiB
	// make the index flush and compact after a few dozen files.
	indexMemTableSize int64
	// syncObjectSize bounds the data objects a push
	// uploads (remotesync.Syncer.ObjectSize), so that small trees make many.
	syncObjectSize int64
	// fetchKeepEvery is how many bytes of records a fetch stores between
	// two commits (remotesync.Syncer.KeepEvery): one commits each record.
	fetchKeepEvery int64
	// chunkThreshold replaces the blob store's chunk threshold
	// (objects.Options.ChunkThreshold), so that a file of a few MiB is
	// stored as several chunks.
	chunkThreshold int64
}

// WaitDefault as Options.LockTimeout waits DefaultLockTimeout for a busy store.
const WaitDefault time.Duration = -1

// validate refuses option values that mean nothing, with ErrBadRequest.
func (o Options) validate() error {
	if o.Profile != "" && !slices.Contains(walker.Profiles, o.Profile) {
		return fmt.Errorf("%w: unknown exclusion profile %q; want one of %s", ErrBadRequest, o.Profile, strings.Join(walker.Profiles, ", "))
	}
	if o.MaxFileSize < NoMaxFileSize {
		return fmt.Errorf("%w: maximum file size %d: want a byte count, 0 for the default or %d for no limit", ErrBadRequest, o.MaxFileSize, NoMaxFileSize)
	}
	return nil
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o Options) maxFileSize() int64 {
	switch {
	case o.MaxFileSize == 0:
		return DefaultMaxFileSize
	case o.MaxFileSize == NoMaxFileSize:
		return 0
	}
	return o.MaxFileSize
}

func (o Options) lockTimeout() time.Duration {
	if o.LockTimeout < 0 {
		return DefaultLockTimeout
	}
	return o.LockTimeout
}
