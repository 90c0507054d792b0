package index

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"

	"github.com/ckpt/ckpt/internal/objects"
)

// FormatVersion is the version of the index's key schema and record
// encodings (doc.go). Meta records it; Open refuses a store written by a
// newer format.
const FormatVersion = 1

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
}

// DB is the Pebble-backed metadata index of one store. It is safe for
// concurrent use by multiple goroutines. Reads see the state after the
// last committed Batch; nothing is visible half-committed.
type DB struct {
	pdb      *pebble.DB
	readOnly bool
}

// quietLogger keeps pebble off stderr: informational and error messages are
// dropped (errors that matter surface through the API's return values), and
// Fatalf, which pebble expects never to return, panics with the message.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("index: pebble fatal error: "+format, args...))
}

// Open opens the index in dir, creating dir (mode 0700) and an empty index
// if they are missing. The write-ahead log is on; see Batch.Commit for the
// durability guarantee. Open fails if the store's Meta records a
// FormatVersion newer than this package's.
func Open(dir string, opts Options) (*DB, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("index: open: %w", err)
	}
	cacheSize := opts.CacheSize
	if cacheSize <= 0 {
		cacheSize = defaultCacheSize
	}
	popts := &pebble.Options{
		FormatMajorVersion: pebbleFormat,
		CacheSize:          cacheSize,
		MemTableSize:       memTableSize,
		Logger:             quietLogger{},
		ReadOnly:           opts.ReadOnly,
		// A first save flushes a few memtables at once; with pebble's default
		// threshold (4) the next, otherwise instant, save would pay for their
		// compaction. Letting L0 grow further amortises it over many saves;
		// reads stay cheap (bloom filters, few keys).
		L0CompactionThreshold: 16,
		L0StopWritesThreshold: 48,
	}
	// Bloom filters at every level: most lookups of a save are of blobs the
	// store does not have yet, which the filter answers without a block read.
	popts.Levels[0].FilterPolicy = bloom.FilterPolicy(10)
	pdb, err := pebble.Open(dir, popts)
	if err != nil {
		return nil, fmt.Errorf("index: open %s: %w", dir, err)
	}
	db := &DB{pdb: pdb, readOnly: opts.ReadOnly}
	m, ok, err := db.Meta()
	if err == nil && ok && m.FormatVersion > FormatVersion {
		err = fmt.Errorf("index: open %s: store format %d is newer than supported format %d", dir, m.FormatVersion, FormatVersion)
	}
	if err != nil {
		return nil, errors.Join(err, pdb.Close())
	}
	return db, nil
}

// Close flushes nothing extra (every committed batch is already durable)
// and releases the database. The DB must not be used afterwards.
func (db *DB) Close() error {
	// A writer leaves its memtable flushed when the write-ahead log has
	// grown, so that the next process opens without replaying it (a reader
	// would replay it on every open); a small log is cheaper to replay than
	// a flush, and tiny flushes would only feed compactions.
	var flushErr error
	if !db.readOnly && db.pdb.Metrics().WAL.Size > walFlushBytes {
		if err := db.pdb.Flush(); err != nil {
			flushErr = fmt.Errorf("index: flush: %w", err)
		}
	}
	if err := db.pdb.Close(); err != nil {
		return errors.Join(flushErr, fmt.Errorf("index: close: %w", err))
	}
	return flushErr
}

// get looks key up and decodes its value. It reports false for a missing
// key; a decode failure is returned naming the key (and wraps ErrCorrupt
// when decode's error does).
func get[T any](db *DB, key []byte, decode func([]byte) (T, error)) (T, bool, error) {
	var zero T
	v, closer, err := db.pdb.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return zero, false, nil
	}
	if err != nil {
		return zero, false, fmt.Errorf("index: get %s: %w", describeKey(key), err)
	}
	defer closer.Close()
	x, err := decode(v)
	if err != nil {
		return zero, false, fmt.Errorf("index: key %s: %w", describeKey(key), err)
	}
	return x, true, nil
}

// scan calls fn for every key with prefix, in key order. k and v are only
// valid during the call.
func (db *DB) scan(prefix []byte, fn func(k, v []byte) error) (err error) {
	it, err := db.pdb.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return fmt.Errorf("index: scan %s: %w", describeKey(prefix), err)
	}
	defer func() {
		if cerr := it.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("index: scan %s: %w", describeKey(prefix), cerr)
		}
	}()
	for it.First(); it.Valid(); it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			return fmt.Errorf("index: read %s: %w", describeKey(it.Key()), err)
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
		return objects.ID{}, fmt.Errorf("index: key %s: %w: key length %d", describeKey(k), ErrCorrupt, len(k))
	}
	return objects.ID(k[1:]), nil
}

// checkSum reports, wrapping ErrCorrupt, a content-addressed value that
// does not hash to the id it is stored under.
func checkSum(id objects.ID, b []byte) error {
	if objects.Sum(b) != id {
		return fmt.Errorf("%w: content does not hash to its id", ErrCorrupt)
	}
	return nil
}

func decodeCheckpointWithID(id objects.ID, b []byte) (Checkpoint, error) {
	if err := checkSum(id, b); err != nil {
		return Checkpoint{}, err
	}
	return DecodeCheckpoint(b)
}

// Tree returns the tree with the given id. It returns an error wrapping
// ErrNotFound if there is none, and one wrapping ErrCorrupt (naming the
// key) if the stored value does not decode or does not hash to id.
// Decoding allocates a fresh Tree the caller owns.
func (db *DB) Tree(id objects.ID) (Tree, error) {
	t, ok, err := get(db, idKey(prefixTree, id), func(b []byte) (Tree, error) {
		if err := checkSum(id, b); err != nil {
			return Tree{}, err
		}
		return DecodeTree(b)
	})
	if err == nil && !ok {
		err = fmt.Errorf("index: tree %s: %w", id, ErrNotFound)
	}
	return t, err
}

// Checkpoint returns the checkpoint with the given id, with the same
// ErrNotFound and ErrCorrupt behaviour as Tree.
func (db *DB) Checkpoint(id objects.ID) (Checkpoint, error) {
	c, ok, err := get(db, idKey(prefixCheckpoint, id), func(b []byte) (Checkpoint, error) {
		return decodeCheckpointWithID(id, b)
	})
	if err == nil && !ok {
		err = fmt.Errorf("index: checkpoint %s: %w", id, ErrNotFound)
	}
	return c, err
}

// CheckpointsWithPrefix returns, in id order, the ids of all checkpoints
// whose hex form starts with hexPrefix (any length up to 64, odd lengths
// included, either case). An empty prefix matches every checkpoint. A
// prefix that is not hex is an error; no match is an empty result.
func (db *DB) CheckpointsWithPrefix(hexPrefix string) ([]objects.ID, error) {
	if len(hexPrefix) > 2*objects.IDSize {
		return nil, fmt.Errorf("index: checkpoint prefix %q longer than an id", hexPrefix)
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
		return nil, fmt.Errorf("index: checkpoint prefix %q: %w", hexPrefix, err)
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
	return db.scan([]byte{prefixTree}, func(k, _ []byte) error {
		id, err := idFromKey(k)
		if err != nil {
			return err
		}
		return fn(id)
	})
}

// EachCheckpoint calls fn with every stored checkpoint, in id order. A value
// that does not decode or hash to its id stops the iteration with an error wrapping
// ErrCorrupt that names the key; an error from fn stops it and is returned.
func (db *DB) EachCheckpoint(fn func(id objects.ID, c Checkpoint) error) error {
	return db.scan([]byte{prefixCheckpoint}, func(k, v []byte) error {
		id, err := idFromKey(k)
		if err != nil {
			return err
		}
		c, err := decodeCheckpointWithID(id, v)
		if err != nil {
			return fmt.Errorf("index: key %s: %w", describeKey(k), err)
		}
		return fn(id, c)
	})
}
