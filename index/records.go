package index

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/ckpt/ckpt/objects"
)

// Meta describes the store as a whole. It is written by the engine when a
// store is created (Batch.SetMeta) and read on every open.
type Meta struct {
	FormatVersion uint32
	Workspace     string    // canonical absolute workspace path
	Created       time.Time // UTC
}

func encodeMeta(m Meta) []byte {
	b := make([]byte, 0, 1+2*binary.MaxVarintLen64+len(m.Workspace)+binary.MaxVarintLen64)
	b = append(b, encodingVersion)
	b = binary.AppendUvarint(b, uint64(m.FormatVersion))
	b = appendString(b, m.Workspace)
	return appendTime(b, m.Created)
}

func decodeMeta(b []byte) (Meta, error) {
	r := reader{b: b}
	r.version()
	v := r.uvarint()
	m := Meta{Workspace: r.string(), Created: r.time()}
	if err := r.end(); err != nil {
		return Meta{}, err
	}
	if v > 1<<32-1 {
		return Meta{}, objects.MarkCorrupt(fmt.Errorf("meta: format version %d overflows uint32", v))
	}
	m.FormatVersion = uint32(v)
	return m, nil
}

// Meta returns the store's Meta record; false if none has been written. A
// stored value that does not decode yields an error marked with objects.ErrCorrupt.
func (db *DB) Meta() (Meta, bool, error) {
	return get(db, metaKey(), decodeMeta)
}

// TaskHead is the state of one task: its current head checkpoint and the
// largest sequence number handed out so far (the head can point at an
// earlier checkpoint after a restore; LastSeq never goes back).
type TaskHead struct {
	Head    objects.ID
	LastSeq uint64
}

func encodeTaskHead(h TaskHead) []byte {
	b := make([]byte, 0, 1+objects.IDSize+binary.MaxVarintLen64)
	b = append(b, encodingVersion)
	b = append(b, h.Head[:]...)
	return binary.AppendUvarint(b, h.LastSeq)
}

func decodeTaskHead(b []byte) (TaskHead, error) {
	r := reader{b: b}
	r.version()
	h := TaskHead{Head: r.id(), LastSeq: r.uvarint()}
	return h, r.end()
}

// Task returns the head of the named task; false if the task does not
// exist. A stored value that does not decode yields an error marked with
// objects.ErrCorrupt.
func (db *DB) Task(name string) (TaskHead, bool, error) {
	return get(db, stringKey(prefixTaskHead, name), decodeTaskHead)
}

// Tasks returns the names of all tasks that have a head, sorted by bytes.
func (db *DB) Tasks() ([]string, error) {
	var names []string
	err := db.scan([]byte{prefixTaskHead}, func(k, _ []byte) error {
		names = append(names, string(k[1:]))
		return nil
	})
	return names, err
}

func decodeIDValue(b []byte) (objects.ID, error) {
	if len(b) != objects.IDSize {
		return objects.ID{}, objects.MarkCorrupt(fmt.Errorf("id value of %d bytes", len(b)))
	}
	return objects.ID(b), nil
}

// CheckpointAt returns the id of the checkpoint with sequence number seq in
// task (the @N ref); false if there is none.
func (db *DB) CheckpointAt(task string, seq uint64) (objects.ID, bool, error) {
	return get(db, taskSeqKey(task, seq), decodeIDValue)
}

// TaskCheckpoints returns the ids of task's checkpoints in sequence order.
// A task without checkpoints (or an unknown one) yields an empty result.
func (db *DB) TaskCheckpoints(task string) ([]objects.ID, error) {
	var ids []objects.ID
	err := db.scan(taskSeqPrefix(task), func(k, v []byte) error {
		id, err := decodeIDValue(v)
		if err != nil {
			return fmt.Errorf("key %s: %w", describeKey(k), err)
		}
		ids = append(ids, id)
		return nil
	})
	return ids, err
}

// SeqID is a checkpoint of a task with its sequence number.
type SeqID struct {
	Seq uint64
	ID  objects.ID
}

// CheckpointsBefore returns up to limit of task's checkpoints whose
// sequence number is below before (0: from the newest), newest first, and
// whether older ones remain. It reads only the keys it returns (and one
// more), however far below before the first one lies: gaps left by gc cost
// nothing.
func (db *DB) CheckpointsBefore(task string, before uint64, limit int) (out []SeqID, more bool, err error) {
	prefix := taskSeqPrefix(task)
	upper := prefixEnd(prefix)
	if before > 0 {
		upper = taskSeqKey(task, before)
	}
	defer db.health.recovered("scan "+describeKey(prefix), &err)
	it, err := db.pdb.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: upper})
	if err != nil {
		return nil, false, fmt.Errorf("scan %s: %w", describeKey(prefix), db.health.classify(err))
	}
	defer func() {
		if cerr := it.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("scan %s: %w", describeKey(prefix), db.health.classify(cerr))
		}
	}()
	for ok := it.Last(); ok; ok = it.Prev() {
		if len(out) == limit {
			return out, true, nil
		}
		k := it.Key()
		if len(k) != len(prefix)+8 {
			return nil, false, objects.MarkCorrupt(fmt.Errorf("key %s: length %d", describeKey(k), len(k)))
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return nil, false, fmt.Errorf("read %s: %w", describeKey(k), db.health.classify(err))
		}
		id, err := decodeIDValue(v)
		if err != nil {
			return nil, false, fmt.Errorf("key %s: %w", describeKey(k), err)
		}
		out = append(out, SeqID{Seq: binary.BigEndian.Uint64(k[len(prefix):]), ID: id})
	}
	return out, false, nil
}

// Config returns the store setting key; false if it is unset.
func (db *DB) Config(key string) (string, bool, error) {
	return get(db, stringKey(prefixConfig, key), func(b []byte) (string, error) { return string(b), nil })
}

// ConfigsOf calls fn for each of keys, in their order, with its setting
// (found false when there is none), stopping at fn's first error: one
// pass of the index, as LocatorsOf reads locators, for keys the caller
// sorts (bytewise; in another order a seek may start from the tables'
// beginning).
func (db *DB) ConfigsOf(keys []string, fn func(i int, value string, found bool) error) error {
	return db.seekEach("settings", []byte{prefixConfig}, func(seek seeker) error {
		for i, key := range keys {
			v, found, err := seek(stringKey(prefixConfig, key))
			if err != nil {
				return err
			}
			if err := fn(i, string(v), found); err != nil {
				return err
			}
		}
		return nil
	})
}
