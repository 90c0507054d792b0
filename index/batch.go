package index

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/ckpt/ckpt/objects"
)

// errBatchDone is returned by a Batch used after Commit or Close.
var errBatchDone = errors.New("batch already committed or closed")

// Batch collects the writes of one save: locators, trees, the checkpoint,
// the task head, dir caches. Nothing of it is visible to readers before
// Commit, and all of it is visible after; a Batch closed without Commit
// leaves the index unchanged.
//
// A Batch is safe for concurrent use: several goroutines may Put into it at
// once (encoding and hashing happen outside its lock). Methods without an
// error result record the first invalid argument they see; Commit then
// fails with that error and writes nothing. Every Batch must be closed,
// whether or not it was committed.
type Batch struct {
	db *DB
	mu struct {
		sync.Mutex
		pb   *pebble.Batch // nil once closed
		done bool          // Commit has been attempted
		err  error         // first invalid argument, returned by Commit
		// trees and dirs are the batch's writes of trees and stat
		// caches, in order, for the DB's memos to follow once it commits.
		trees []func(memoWrites[objects.ID, cachedTree])
		dirs  []func(memoWrites[string, []byte])
		// locators are the blobs whose locators the batch writes or
		// deletes, for the DB's memo to forget once it commits.
		locators []objects.ID
	}
}

// NewBatch starts an empty batch.
func (db *DB) NewBatch() *Batch {
	b := &Batch{db: db}
	b.mu.pb = db.pdb.NewBatch()
	return b
}

// bufPool recycles encoding buffers: pebble copies keys and values into the
// batch, so a buffer is free again as soon as the write is recorded.
var bufPool = sync.Pool{New: func() any { return new([]byte) }}

// apply runs op on the underlying batch under the lock, recording op's
// error (and use after Commit or Close) as the batch's error.
func (b *Batch) apply(op func(pb *pebble.Batch) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	err := errBatchDone
	if b.mu.pb != nil && !b.mu.done {
		err = op(b.mu.pb)
	}
	if err != nil {
		b.failLocked(err)
	}
	return err
}

func (b *Batch) failLocked(err error) {
	if b.mu.err == nil {
		b.mu.err = err
	}
}

// fail records err (if non-nil) as the batch's error.
func (b *Batch) fail(err error) {
	b.mu.Lock()
	b.failLocked(err)
	b.mu.Unlock()
}

func (b *Batch) set(key, value []byte) error {
	return b.apply(func(pb *pebble.Batch) error { return pb.Set(key, value, nil) })
}

func (b *Batch) del(key []byte) {
	_ = b.apply(func(pb *pebble.Batch) error { return pb.Delete(key, nil) })
}

// PutLocator records where blob id is stored.
func (b *Batch) PutLocator(id objects.ID, loc objects.Locator) {
	buf := bufPool.Get().(*[]byte)
	*buf = loc.AppendBinary((*buf)[:0])
	b.locatorWrite(id, func(pb *pebble.Batch) error { return pb.Set(idKey(prefixLocator, id), *buf, nil) })
	bufPool.Put(buf)
}

// locatorWrite applies write, a write of blob id's locator, to b's batch
// and records id for the DB's locator memo to forget once the batch
// commits.
func (b *Batch) locatorWrite(id objects.ID, write func(pb *pebble.Batch) error) {
	_ = b.recorded(write, func() { b.mu.locators = append(b.mu.locators, id) })
}

// PutTree stores t whole under its id (TreeID), replacing a delta record
// stored for it, and returns the id. An invalid tree is refused with
// EncodeTree's error and does not affect the batch. The batch keeps t's
// entries, for the DB to answer Tree from once it commits: t must not be
// modified afterwards.
func (b *Batch) PutTree(t objects.Tree) (objects.ID, error) {
	return b.putTree(t, func(objects.ID, []byte) ([]byte, uint64, bool, error) { return nil, 0, false, nil })
}

// PutTreeAgainst stores t under its id like PutTree, but as a delta record
// against base (the previous tree of the same directory, committed before
// this batch) when that is at most half the size of t whole. When base
// ends a full chain (MaxTreeDeltaDepth), the delta is against the tree at
// depth MaxTreeDeltaDepth/2 on base's chain, under the same condition. A
// zero, missing or damaged base stores t whole. A tree the index holds
// already is left as it is, whatever base is (a save that read a
// directory again and found its tree unchanged passes that tree as its
// own base): no chain can come back to itself, and no delta is replaced
// by the whole tree. Reading t back (DB.Tree) needs base for as long as t
// is stored as a delta of it.
func (b *Batch) PutTreeAgainst(t objects.Tree, base objects.ID) (objects.ID, error) {
	return b.putTree(t, func(id objects.ID, enc []byte) ([]byte, uint64, bool, error) {
		if base.IsZero() {
			return nil, 0, false, nil
		}
		stored, err := b.db.hasTree(id)
		if err != nil || stored {
			return nil, 0, stored, err
		}
		if base == id {
			return nil, 0, false, nil
		}
		delta, depth, err := b.db.treeDeltaFor(t, enc, base)
		return delta, depth, false, err
	})
}

// PutTreeFamily stores trees[0] whole, like PutTree, and every other tree
// of trees as a delta record against it when that is at most half the
// size of the tree whole, else whole too, each replacing the record the
// index holds for it. A collection uses it on the live trees that were
// deltas of the same tree it deletes: they differ little from one another.
// The base is whole in the same batch, so no chain can come back to
// itself. An invalid tree is refused with EncodeTree's error.
func (b *Batch) PutTreeFamily(trees []objects.Tree) error {
	if len(trees) == 0 {
		return nil
	}
	first, err := b.PutTree(trees[0])
	if err != nil {
		return err
	}
	for _, t := range trees[1:] {
		_, err := b.putTree(t, func(id objects.ID, enc []byte) ([]byte, uint64, bool, error) {
			if id == first {
				return nil, 0, false, nil
			}
			delta, depth, err := treeDeltaOf(t, enc, first, trees[0].Entries, 0)
			return delta, depth, false, err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// putTree encodes t and stores it under its id: as the delta record choose
// returns, whole when that is nil, or not at all when it says so (keep).
func (b *Batch) putTree(t objects.Tree, choose func(id objects.ID, enc []byte) (delta []byte, depth uint64, keep bool, err error)) (objects.ID, error) {
	buf := bufPool.Get().(*[]byte)
	defer bufPool.Put(buf)
	enc, err := appendTree((*buf)[:0], t)
	if err != nil {
		return objects.ID{}, err
	}
	*buf = enc
	id := objects.Sum(enc)
	delta, depth, keep, err := choose(id, enc)
	switch {
	case err != nil:
		return objects.ID{}, err
	case keep:
		return id, nil
	}
	rec := enc
	if delta != nil {
		rec = delta
	}
	kept := cachedTree{entries: t.Entries, depth: depth}
	err = followed(b, &b.mu.trees, func(pb *pebble.Batch) error { return pb.Set(idKey(prefixTree, id), rec, nil) },
		func(w memoWrites[objects.ID, cachedTree]) { w.put(id, kept) })
	if err != nil {
		return objects.ID{}, err
	}
	return id, nil
}

// PutCheckpoint stores c under its id (CheckpointID), records it as
// checkpoint c.Seq of task c.Task (the @N lookup), and returns the id. It
// does not move the task head: call SetTaskHead. A checkpoint with an
// invalid task name, an unknown kind or a zero Seq is refused and does not
// affect the batch.
func (b *Batch) PutCheckpoint(c Checkpoint) (objects.ID, error) {
	if err := validCheckpoint(&c); err != nil {
		return objects.ID{}, err
	}
	enc := EncodeCheckpoint(c)
	id := objects.Sum(enc)
	err := b.apply(func(pb *pebble.Batch) error {
		if err := pb.Set(idKey(prefixCheckpoint, id), enc, nil); err != nil {
			return err
		}
		return pb.Set(taskSeqKey(c.Task, c.Seq), id[:], nil)
	})
	if err != nil {
		return objects.ID{}, err
	}
	return id, nil
}

// SetTaskHead creates or moves the head of task. An invalid task name
// (ValidTask) makes Commit fail.
func (b *Batch) SetTaskHead(task string, h TaskHead) {
	if err := ValidTask(task); err != nil {
		b.fail(err)
		return
	}
	_ = b.set(stringKey(prefixTaskHead, task), encodeTaskHead(h))
}

// PutDirCache replaces the stat cache of workspace directory dir. An
// invalid dir, or entries that are not sorted by objects.ValidName names, make
// Commit fail.
func (b *Batch) PutDirCache(dir string, dc DirCache) {
	if err := validDir(dir); err != nil {
		b.fail(err)
		return
	}
	if err := validDirCache(&dc); err != nil {
		b.fail(fmt.Errorf("dircache %q: %w", dir, err))
		return
	}
	// Encoded in a pooled buffer (appendDirCache reserves for the longest
	// encoding), kept at its exact length: the memo holds it.
	buf := bufPool.Get().(*[]byte)
	*buf = appendDirCache((*buf)[:0], &dc)
	v := bytes.Clone(*buf)
	bufPool.Put(buf)
	_ = followed(b, &b.mu.dirs, func(pb *pebble.Batch) error { return pb.Set(stringKey(prefixDirCache, dir), v, nil) },
		func(w memoWrites[string, []byte]) { w.put(dir, v) })
}

// DeleteDirCache removes the stat cache of dir, if any.
func (b *Batch) DeleteDirCache(dir string) {
	_ = followed(b, &b.mu.dirs, func(pb *pebble.Batch) error { return pb.Delete(stringKey(prefixDirCache, dir), nil) },
		func(w memoWrites[string, []byte]) { w.drop(dir) })
}

// DeleteDirCacheTree removes the stat caches of dir and of every directory
// below it (a directory that vanished from the workspace with its subtree).
func (b *Batch) DeleteDirCacheTree(dir string) {
	// Keys of the subtree are exactly those in ["dir/", "dir0"): '0' follows '/'.
	start, end := stringKey(prefixDirCache, dir+"/"), stringKey(prefixDirCache, dir+"0")
	_ = followed(b, &b.mu.dirs, func(pb *pebble.Batch) error {
		if err := pb.Delete(stringKey(prefixDirCache, dir), nil); err != nil {
			return err
		}
		return pb.DeleteRange(start, end, nil)
	}, func(w memoWrites[string, []byte]) {
		w.drop(dir)
		w.dropWhere(func(d string) bool { return strings.HasPrefix(d, dir+"/") })
	})
}

// SetMeta writes the store's Meta record.
func (b *Batch) SetMeta(m Meta) {
	_ = b.set(metaKey(), encodeMeta(m))
}

// SetConfig sets store setting key to value. An empty key makes Commit
// fail.
func (b *Batch) SetConfig(key, value string) {
	if key == "" {
		b.fail(errors.New("empty config key"))
		return
	}
	_ = b.set(stringKey(prefixConfig, key), []byte(value))
}

// DeleteCheckpoint removes checkpoint id and its (task, seq) entry. It does
// not touch the task head or the trees and blobs the checkpoint references.
func (b *Batch) DeleteCheckpoint(id objects.ID, task string, seq uint64) {
	_ = b.apply(func(pb *pebble.Batch) error {
		if err := pb.Delete(idKey(prefixCheckpoint, id), nil); err != nil {
			return err
		}
		return pb.Delete(taskSeqKey(task, seq), nil)
	})
}

// DeleteTask removes task's head and all its (seq → id) entries. The
// checkpoints themselves stay until DeleteCheckpoint removes them.
func (b *Batch) DeleteTask(task string) {
	if err := ValidTask(task); err != nil {
		b.fail(err)
		return
	}
	_ = b.apply(func(pb *pebble.Batch) error {
		if err := pb.Delete(stringKey(prefixTaskHead, task), nil); err != nil {
			return err
		}
		p := taskSeqPrefix(task)
		return pb.DeleteRange(p, prefixEnd(p), nil)
	})
}

// DeleteTree removes tree id. A tree stored as a delta of it (DB.EachTreeBase)
// no longer reads once the batch commits: store such a tree whole (PutTree)
// in the same batch.
func (b *Batch) DeleteTree(id objects.ID) {
	_ = followed(b, &b.mu.trees, func(pb *pebble.Batch) error { return pb.Delete(idKey(prefixTree, id), nil) },
		func(w memoWrites[objects.ID, cachedTree]) { w.drop(id) })
}

// DeleteLocator removes the locator of blob id.
func (b *Batch) DeleteLocator(id objects.ID) {
	b.locatorWrite(id, func(pb *pebble.Batch) error { return pb.Delete(idKey(prefixLocator, id), nil) })
}

// Commit applies the batch atomically and durably: when it returns nil,
// every write is visible to all readers and the write-ahead log holding it
// has been fsynced, so it survives a process crash or power loss. If the
// process dies before Commit returns, the index shows either all of the
// batch or none of it, never part. A Commit pebble cannot complete (disk
// full, permission denied, I/O error, in the log or in a flush it waits
// for) returns that error instead of blocking, and so does every later
// Commit of the DB. Commit fails, writing nothing, if a
// method recorded an invalid argument, or if the batch was already
// committed or closed. Close must still be called.
func (b *Batch) Commit() error { return b.commit(pebble.Sync) }

// CommitUnsynced applies the batch atomically like Commit, visible to all
// readers when it returns, but does not wait for the write-ahead log to
// reach the disk: a power loss may lose the whole batch (never part of
// it), and the next Commit makes it durable with its own writes, the log
// being durable in order. It is for writes whose loss costs only work
// again, such as stat-cache records refreshed by a save that found
// nothing changed.
func (b *Batch) CommitUnsynced() error { return b.commit(pebble.NoSync) }

func (b *Batch) commit(opts *pebble.WriteOptions) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.mu.err != nil {
		return b.mu.err
	}
	if b.mu.pb == nil || b.mu.done {
		return errBatchDone
	}
	b.mu.done = true
	if err := b.db.health.err(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	pb := b.mu.pb
	err := b.db.await("commit", b.db.health.stuck, func() error { return pb.Commit(opts) })
	if err != nil {
		// A commit pebble is still working on must not have its batch
		// released under it.
		if b.db.abandoned.Load() > 0 {
			b.mu.pb = nil
		}
		// Whether pebble applied any of it is not known: the memos
		// forget everything rather than answer what it replaced.
		b.db.trees.clear()
		b.db.dirCaches.clear()
		b.db.locators.clear()
		return fmt.Errorf("commit: %w", err)
	}
	followAll(b.db.trees, b.mu.trees)
	followAll(b.db.dirCaches, b.mu.dirs)
	if ids := b.mu.locators; len(ids) > 0 {
		b.db.locators.follow(func(w memoWrites[objects.ID, objects.Locator]) {
			for _, id := range ids {
				w.drop(id)
			}
		})
	}
	b.mu.trees, b.mu.dirs, b.mu.locators = nil, nil, nil
	return nil
}

// Close releases the batch, discarding its writes if Commit did not apply
// them. It is idempotent.
func (b *Batch) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.mu.pb == nil {
		return nil
	}
	err := b.mu.pb.Close()
	b.mu.pb = nil
	if err != nil {
		return fmt.Errorf("close batch: %w", err)
	}
	return nil
}

// followed applies write to b's batch and records follow in ops, for the
// DB's memo to replay once the batch commits.
func followed[K comparable, V any](b *Batch, ops *[]func(memoWrites[K, V]), write func(pb *pebble.Batch) error, follow func(memoWrites[K, V])) error {
	return b.recorded(write, func() { *ops = append(*ops, follow) })
}

// recorded applies write to b's batch as apply does and, when it
// succeeds, calls record under the batch's lock: the memos learn of a
// write only if the batch holds it.
func (b *Batch) recorded(write func(pb *pebble.Batch) error, record func()) error {
	return b.apply(func(pb *pebble.Batch) error {
		if err := write(pb); err != nil {
			return err
		}
		record()
		return nil
	})
}

// followAll has m follow a committed batch's writes ops, if any.
func followAll[K comparable, V any](m *memo[K, V], ops []func(memoWrites[K, V])) {
	if len(ops) == 0 {
		return
	}
	m.follow(func(w memoWrites[K, V]) {
		for _, op := range ops {
			op(w)
		}
	})
}
