package index

import (
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/ckpt/ckpt/internal/storefs"
	"github.com/ckpt/ckpt/objects"
)

// FormatVersion is the version of the index's key schema and record
// encodings (doc.go). Meta records it; Open refuses a store written by a
// newer format.
const FormatVersion = 2

// pebbleFormat is pinned rather than FormatNewest so that upgrading the
// pebble module never silently ratchets the on-disk format of existing
// stores. It is the newest format pebble v2.1.7 knows.
const pebbleFormat = pebble.FormatValueSeparation

const (
	defaultCacheSize = 32 << 20
	memTableSize     = 4 << 20
	// walFlushBytes is the write-ahead log size above which Close flushes.
	walFlushBytes = 1 << 20
)

// Options tunes Open.
type Options struct {
	// CacheSize is the block cache size in bytes; 0 means 32 MiB.
	CacheSize int64
	// ReadOnly opens an existing index for reading only: Commit fails, and
	// no background compaction runs (a short-lived reader does not pay for
	// the compactions a writer left due). The index must exist.
	ReadOnly bool
	// OnBackgroundError, when set, receives the errors of pebble's
	// background work (flushes, compactions, file deletions) and its error
	// log messages, from whichever goroutine met them. A failed flush or
	// compaction also fails the next Commit; the callback is for reporting.
	OnBackgroundError func(error)
	// FS is the file system the index lives on; nil means the OS
	// (storefs.OS).
	// Fault-injection tests set it.
	FS vfs.FS
	// MemTableSize is the size in bytes of the memtable, the writes the
	// index gathers in memory before flushing them to a table; 0 means
	// 4 MiB. A smaller one flushes, and so compacts, after fewer writes:
	// tests of flush and compaction failures set a few KiB, so that a few
	// dozen files reach a table.
	MemTableSize int64
}

// DB is the Pebble-backed metadata index of one store. It is safe for
// concurrent use by multiple goroutines. Reads see the state after the
// last committed Batch; nothing is visible half-committed.
//
// No method panics on a damaged index: pebble's fatal paths and panics
// are turned into errors marked with objects.ErrCorrupt (naming the
// damaged file when pebble names it). A write pebble cannot complete (a
// full disk, a read-only directory, an I/O error) fails the Commit that
// needs it, and every later Commit, instead of being retried for ever.
type DB struct {
	pdb      *pebble.DB
	readOnly bool
	health   *health
	// abandoned counts commits await stopped waiting for in a write stall
	// that will never end; pebble holds its commit lock in them.
	abandoned atomic.Int32
	// trees and dirCaches keep records read or committed recently (memo):
	// trees resolved down their delta chains, with their record's depth,
	// and stat caches as stored. locators keeps the blob locators read
	// recently; a committed write of one only drops it (a first save
	// writes a hundred thousand, which nothing reads back soon).
	trees     *memo[objects.ID, cachedTree]
	dirCaches *memo[string, []byte]
	locators  *memo[objects.ID, objects.Locator]
}

// cachedTree is a resolved tree in DB.trees: its entries, and the depth
// of its stored record.
type cachedTree struct {
	entries []objects.Entry
	depth   uint64
}

// Memo budgets, in tree entries (about a hundred bytes each), stat-cache
// bytes and locators (about a hundred bytes each), about 12 MiB in all:
// the directories a host's save, diff and restore of one tool call touch,
// and their ancestors, and the blobs they read, many times over on a
// workspace of a hundred thousand files.
const (
	treeMemoEntries    = 1 << 16
	dirCacheMemo       = 4 << 20
	locatorMemoEntries = 1 << 14
)

func newMemos(db *DB) {
	db.trees = newMemo[objects.ID](treeMemoEntries, func(t cachedTree) int { return len(t.entries) + 1 })
	db.dirCaches = newMemo[string](dirCacheMemo, func(v []byte) int { return len(v) + 64 })
	db.locators = newMemo[objects.ID](locatorMemoEntries, func(objects.Locator) int { return 1 })
}

// Open opens the index in dir, creating dir (mode 0700) and an empty index
// if dir is missing or empty. If the log replayed at open cannot be
// flushed (disk full, say), Open returns that error; pebble's lock on dir
// is then held until the process exits. It never creates an index over existing
// files: a dir holding files but no index (a deleted MANIFEST marker, say)
// fails with objects.ErrCorrupt and is left untouched, as does damaged index
// metadata (MANIFEST, OPTIONS). The write-ahead log is on; see
// Batch.Commit for the durability guarantee. Open fails if the store's
// Meta records a FormatVersion newer than this package's.
func Open(dir string, opts Options) (db *DB, err error) {
	h := newHealth(opts.OnBackgroundError)
	defer h.recovered("open "+dir, &err)
	fsys := storefs.Or(opts.FS)
	if err := storefs.MkdirAll(fsys, dir, 0o700); err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	entries, err := fsys.List(dir)
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	existing := len(entries) > 0
	if existing && !hasManifestMarker(entries) {
		return nil, openError(dir, existing, pebble.ErrDBDoesNotExist)
	}
	popts := pebbleOptions(opts, h)
	popts.ErrorIfNotExists = existing
	db = &DB{readOnly: opts.ReadOnly, health: h}
	newMemos(db)
	// Opening replays the log and flushes it, waiting for a flush pebble
	// would retry for ever; await gives up on it once the flush fails.
	err = db.await("open "+dir, h.failed, func() (err error) {
		db.pdb, err = pebble.Open(dir, popts)
		return err
	})
	if err != nil {
		return nil, openError(dir, existing, h.classify(err))
	}
	m, ok, err := db.Meta()
	if err == nil && ok && m.FormatVersion > FormatVersion {
		err = fmt.Errorf("open %s: store format %d is newer than supported format %d", dir, m.FormatVersion, FormatVersion)
	}
	if err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return db, nil
}

func pebbleOptions(opts Options, h *health) *pebble.Options {
	cacheSize := opts.CacheSize
	if cacheSize <= 0 {
		cacheSize = defaultCacheSize
	}
	popts := &pebble.Options{
		FormatMajorVersion: pebbleFormat,
		CacheSize:          cacheSize,
		MemTableSize:       cmp.Or(uint64(max(opts.MemTableSize, 0)), memTableSize),
		Logger:             logger{h},
		EventListener:      h.eventListener(),
		ReadOnly:           opts.ReadOnly,
		FS:                 gateFS{FS: storefs.Or(opts.FS), h: h},
		// A first save flushes a few memtables at once; with pebble's default
		// threshold (4) the next, otherwise instant, save would pay for their
		// compaction. Letting L0 grow further amortises it over many saves;
		// reads stay cheap (bloom filters, few keys).
		L0CompactionThreshold: 16,
		L0StopWritesThreshold: 48,
		// A commit that pebble stalls waiting for a flush holds its commit
		// lock until the flush succeeds, which after a failed flush is never
		// (Close then blocks too). Commits stop at the first failed flush
		// (health), so the stall only needs to stop a writer that outruns
		// healthy flushes: 16 memtables (64 MiB) leave room for every write
		// already under way when a flush fails.
		MemTableStopWritesThreshold: 16,
	}
	if opts.ReadOnly {
		popts.FS = readOnlyFS{popts.FS}
	}
	// Bloom filters at every level: most lookups of a save are of blobs the
	// store does not have yet, which the filter answers without a block read.
	popts.Levels[0].FilterPolicy = bloom.FilterPolicy(10)
	return popts
}

// hasManifestMarker reports whether entries hold the marker file that
// names pebble's current MANIFEST; without it pebble would create a new,
// empty index and delete the tables it does not know.
func hasManifestMarker(entries []string) bool {
	for _, e := range entries {
		if strings.HasPrefix(e, "marker.manifest.") {
			return true
		}
	}
	return false
}

// openError describes a failed pebble.Open. Damaged metadata, and over
// existing files anything but an operating-system refusal (permission,
// space, I/O, pebble's own lock), means the index is missing or damaged: a
// *damageError naming dir unless pebble named the file.
func openError(dir string, existing bool, err error) error {
	var ce *damageError
	var errno syscall.Errno
	switch {
	case errors.As(err, &ce):
		if ce.Path == "" {
			ce.Path = dir
		}
		return err
	case errors.Is(err, pebble.ErrDBDoesNotExist):
		return &damageError{Path: dir, Err: errors.New("files present but no MANIFEST marker (marker.manifest.*); refusing to create an index over them")}
	case existing && !(errors.As(err, &errno) && errno != syscall.ENOENT) && !strings.Contains(err.Error(), "lock held"):
		return &damageError{Path: dir, Err: err}
	}
	return fmt.Errorf("open %s: %w", dir, err)
}

// FlushGrownLog flushes the memtable when the write-ahead log has grown
// past walFlushBytes, as Close does. A writer that keeps the DB open
// through a long run of commits (a background recompression, which closes
// it while another process waits) calls it between them, so that no one
// Close flushes more than that.
func (db *DB) FlushGrownLog() error {
	if err := db.health.err(); err != nil {
		return err
	}
	if db.readOnly || db.pdb.Metrics().WAL.Size <= walFlushBytes {
		return nil
	}
	if err := db.await("flush", db.health.failed, db.pdb.Flush); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	return nil
}

// Close flushes nothing extra (every committed batch is already durable)
// and releases the database. The DB must not be used afterwards. On a DB
// whose background work failed, Close returns that failure; if a Commit
// was left waiting on pebble then, pebble's resources (its lock on dir
// among them) stay held until the process exits, since releasing them
// would wait for ever.
func (db *DB) Close() (err error) {
	defer db.health.recovered("close", &err)
	// A writer leaves its memtable flushed when the write-ahead log has
	// grown, so that the next process opens without replaying it (a reader
	// would replay it on every open); a small log is cheaper to replay than
	// a flush, and tiny flushes would only feed compactions.
	var flushErr error
	if db.health.err() == nil {
		flushErr = db.FlushGrownLog()
	}
	db.health.release()
	if db.abandoned.Load() > 0 || db.health.isWedged() {
		// pebble.Close would wait for an abandoned call's locks for ever.
		// The database stays open until the process exits; the log holds
		// every committed batch, so nothing durable is lost.
		return db.health.err()
	}
	// Closing writes the log's tail; a failure there wedges the DB.
	if err := db.await("close", db.health.stuck, db.pdb.Close); err != nil {
		flushErr = errors.Join(flushErr, fmt.Errorf("close: %w", err))
	}
	if fatal := db.health.err(); fatal != nil && flushErr == nil {
		return fatal
	}
	return flushErr
}

// Compact rewrites every table of the index into one sorted run,
// dropping the values later writes replaced and the records deletions
// removed, which pebble's background compactions would otherwise keep on
// disk until enough new writes came: gc calls it after sweeping, so that
// what it deleted leaves the disk with the packs it reclaimed. It needs a
// writable index and fails, like Commit, once pebble's background work
// failed.
func (db *DB) Compact(ctx context.Context) error {
	if err := db.health.err(); err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	// Every key starts with one of the prefix bytes, all below 0xff.
	err := db.await("compact", db.health.failed, func() error { return db.pdb.Compact(ctx, []byte{0}, []byte{0xff}, false) })
	if err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	return nil
}

// await runs fn, which may wait on pebble's background work, and returns
// its error. It stops waiting, returning the DB's fatal failure, once
// abort is closed (health.failed or health.stuck): pebble would otherwise
// wait for a flush it retries for ever. A panic in fn is returned as an
// error.
func (db *DB) await(op string, abort <-chan struct{}, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		var err error
		defer func() { done <- err }()
		defer db.health.recovered(op, &err)
		err = fn()
	}()
	select {
	case err := <-done:
		if fatal := db.health.err(); fatal != nil {
			return fatal
		}
		return db.health.classify(err)
	case <-abort:
		if abort == db.health.stuck {
			db.abandoned.Add(1)
		}
		return db.health.err()
	}
}

// get looks key up and decodes its value. It reports false for a missing
// key; a decode failure is returned naming the key (and is marked with objects.ErrCorrupt
// when decode's error does).
func get[T any](db *DB, key []byte, decode func([]byte) (T, error)) (x T, ok bool, err error) {
	defer db.health.recovered("get "+describeKey(key), &err)
	var zero T
	v, closer, err := db.pdb.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return zero, false, nil
	}
	if err != nil {
		return zero, false, fmt.Errorf("get %s: %w", describeKey(key), db.health.classify(err))
	}
	defer closer.Close()
	x, err = decode(v)
	if err != nil {
		return zero, false, fmt.Errorf("key %s: %w", describeKey(key), err)
	}
	return x, true, nil
}

// copyValue is get's decoder of a value kept as stored: a copy, since
// pebble's buffer is only valid during the call.
func copyValue(b []byte) ([]byte, error) { return append([]byte(nil), b...), nil }

// scan calls fn for every key with prefix, in key order. k and v are only
// valid during the call.
func (db *DB) scan(prefix []byte, fn func(k, v []byte) error) (err error) {
	defer db.health.recovered("scan "+describeKey(prefix), &err)
	it, err := db.pdb.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return fmt.Errorf("scan %s: %w", describeKey(prefix), db.health.classify(err))
	}
	defer func() {
		if cerr := it.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("scan %s: %w", describeKey(prefix), db.health.classify(cerr))
		}
	}()
	for it.First(); it.Valid(); it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			return fmt.Errorf("read %s: %w", describeKey(it.Key()), db.health.classify(err))
		}
		if err := fn(it.Key(), v); err != nil {
			return err
		}
	}
	return nil
}

// idFromKey returns the id that follows the one-byte prefix of k, or a
// corruption error naming the key.
func idFromKey(k []byte) (objects.ID, error) {
	if len(k) != 1+objects.IDSize {
		return objects.ID{}, objects.MarkCorrupt(fmt.Errorf("key %s: key length %d", describeKey(k), len(k)))
	}
	return objects.ID(k[1:]), nil
}

// checkSum reports, marked with objects.ErrCorrupt, a content-addressed value that
// does not hash to the id it is stored under.
func checkSum(id objects.ID, b []byte) error {
	if objects.Sum(b) != id {
		return objects.MarkCorrupt(errors.New("content does not hash to its id"))
	}
	return nil
}

func decodeCheckpointWithID(id objects.ID, b []byte) (Checkpoint, error) {
	if err := checkSum(id, b); err != nil {
		return Checkpoint{}, err
	}
	return DecodeCheckpoint(b)
}

// Tree returns the tree with the given id, resolving a delta record down
// its chain (at most MaxTreeDeltaDepth records) to the full tree. It
// returns an error wrapping ErrNotFound if there is none, marked with
// objects.ErrCorrupt as well (a tree is asked for by the id a checkpoint
// or another tree names: one the index lacks is damage, which a restore, a
// diff or a push reports as such); and one marked with objects.ErrCorrupt
// alone (naming the key) if a stored value on the chain does not decode, a
// delta's base is missing, or the tree does not hash to id. The returned objects.Tree is the caller's own. A tree this DB
// resolved or committed recently is answered from memory, so
// damage done to its stored records after that is seen by StoredTree,
// not here. A tree id is the hash of the tree's canonical encoding,
// checked at first resolution, so an id names one tree for ever.
func (db *DB) Tree(id objects.ID) (objects.Tree, error) {
	t, err := db.SharedTree(id)
	return objects.Tree{Entries: slices.Clone(t.Entries)}, err
}

// SharedTree is Tree without the copy: the entries may be the ones the
// DB keeps in memory and hands to every caller, so they must only be
// read. Readers of many trees at once (a diff, a restore's plan) save a
// copy of each.
func (db *DB) SharedTree(id objects.ID) (objects.Tree, error) {
	entries, _, ok, err := db.sharedTree(id)
	if err == nil && !ok {
		err = missingTree(id)
	}
	return objects.Tree{Entries: entries}, err
}

// StoredTree is Tree read from the stored records every time, down the
// whole chain, never from memory: the walk of every tree that gc and
// verify make, which must see damage on disk.
func (db *DB) StoredTree(id objects.ID) (objects.Tree, error) {
	t, _, ok, err := db.resolveTree(id, false)
	if err == nil && !ok {
		err = missingTree(id)
	}
	return t, err
}

// missingTree is the error of a tree the index lacks (see Tree).
func missingTree(id objects.ID) error {
	return objects.MarkCorrupt(fmt.Errorf("tree %s: %w", id, ErrNotFound))
}

// Checkpoint returns the checkpoint with the given id. It returns an error
// wrapping ErrNotFound if there is none (unmarked, unlike a missing
// tree's), and one marked with objects.ErrCorrupt (naming the key) if its
// stored value does not decode or hash to id.
func (db *DB) Checkpoint(id objects.ID) (Checkpoint, error) {
	c, ok, err := get(db, idKey(prefixCheckpoint, id), func(b []byte) (Checkpoint, error) {
		return decodeCheckpointWithID(id, b)
	})
	if err == nil && !ok {
		err = fmt.Errorf("checkpoint %s: %w", id, ErrNotFound)
	}
	return c, err
}

// CheckpointsWithPrefix returns, in id order, the ids of all checkpoints
// whose hex form starts with hexPrefix (any length up to 64, odd lengths
// included, either case). An empty prefix matches every checkpoint. A
// prefix that is not hex is an error; no match is an empty result.
func (db *DB) CheckpointsWithPrefix(hexPrefix string) ([]objects.ID, error) {
	if len(hexPrefix) > 2*objects.IDSize {
		return nil, fmt.Errorf("checkpoint prefix %q longer than an id", hexPrefix)
	}
	even := hexPrefix[:len(hexPrefix)&^1]
	p, err := hex.DecodeString(even)
	var nibble byte
	if err == nil && len(hexPrefix)%2 == 1 {
		var b []byte
		b, err = hex.DecodeString(hexPrefix[len(even):] + "0")
		if err == nil {
			nibble = b[0]
		}
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint prefix %q: %w", hexPrefix, err)
	}
	prefix := append([]byte{prefixCheckpoint}, p...)
	var ids []objects.ID
	err = db.scan(prefix, func(k, _ []byte) error {
		id, err := idFromKey(k)
		if err != nil {
			return err
		}
		if len(hexPrefix)%2 == 0 || id[len(p)]&0xf0 == nibble {
			ids = append(ids, id)
		}
		return nil
	})
	return ids, err
}

// EachTree calls fn with the id of every stored tree, in id order, without
// reading the trees. An error from fn stops the iteration and is returned.
func (db *DB) EachTree(fn func(id objects.ID) error) error {
	return db.EachTreeBase(func(id, _ objects.ID) error { return fn(id) })
}

// EachTreeBase calls fn with the id of every stored tree, in id order, and
// the id of the tree its stored value is a delta of (zero for a full
// value), reading only the values' headers. Reading a delta tree needs its
// base, and the base's base, down to a full value: whoever deletes a tree
// stores its deltas whole first (PutTree). A delta whose header does not
// decode stops the iteration with an error marked with objects.ErrCorrupt;
// an error from fn stops it and is returned.
func (db *DB) EachTreeBase(fn func(id, base objects.ID) error) error {
	return db.scan([]byte{prefixTree}, func(k, v []byte) error {
		id, err := idFromKey(k)
		if err != nil {
			return err
		}
		var base objects.ID
		if isTreeDelta(v) {
			if _, base, err = treeDeltaHeader(v); err != nil {
				return fmt.Errorf("key %s: %w", describeKey(k), err)
			}
		}
		return fn(id, base)
	})
}

// EachCheckpoint calls fn with every stored checkpoint, in id order. A value
// that does not decode or hash to its id stops the iteration with an error marked
// with objects.ErrCorrupt that names the key; an error from fn stops it and is returned.
func (db *DB) EachCheckpoint(fn func(id objects.ID, c Checkpoint) error) error {
	return db.scan([]byte{prefixCheckpoint}, func(k, v []byte) error {
		id, err := idFromKey(k)
		if err != nil {
			return err
		}
		c, err := decodeCheckpointWithID(id, v)
		if err != nil {
			return fmt.Errorf("key %s: %w", describeKey(k), err)
		}
		return fn(id, c)
	})
}
