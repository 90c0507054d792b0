package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ckpt/ckpt/objects"
)

// CheckpointKind says why a checkpoint was taken.
type CheckpointKind uint8

// Checkpoint kinds. The numeric values are part of the on-disk encoding.
const (
	// KindSave is a checkpoint the host asked for.
	KindSave CheckpointKind = 1
	// KindBackup is the automatic snapshot taken before a restore.
	KindBackup CheckpointKind = 2
)

// String returns "save" or "backup".
func (k CheckpointKind) String() string {
	switch k {
	case KindSave:
		return "save"
	case KindBackup:
		return "backup"
	}
	return "unknown"
}

// Stats summarises what a save found, relative to the task's previous head.
type Stats struct {
	Files       uint64 // files (and symlinks) in the checkpoint
	Added       uint64
	Modified    uint64
	Deleted     uint64
	BytesHashed uint64 // bytes read and hashed by this save
	DurationMs  uint64
}

// Checkpoint is one snapshot of the workspace in a task's chain. Its id is
// the BLAKE3 of its canonical encoding.
type Checkpoint struct {
	Parent  objects.ID // zero for the first checkpoint of a task
	Task    string
	Seq     uint64 // 1-based position in the task (@N)
	Root    objects.ID
	Time    time.Time // stored with nanosecond precision, UTC
	Message string
	Kind    CheckpointKind
	Empty   bool // true when Root equals the parent's Root
	Stats   Stats
	Meta    map[string]string
	State   objects.ID // blob id of the host's state blob; zero when none
}

// appendTime appends t as zig-zag varint UTC unix nanoseconds. The zero
// Time is stored as 0 (and the instant 1970-01-01T00:00:00Z is therefore
// read back as the zero Time); times outside the years 1678-2262 are not
// representable.
func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return binary.AppendVarint(b, 0)
	}
	return binary.AppendVarint(b, t.UnixNano())
}

// readTime is the inverse of appendTime; the result is in UTC.
func (r *reader) time() time.Time {
	ns := r.varint()
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// validCheckpoint reports why c cannot be stored, or nil.
func validCheckpoint(c *Checkpoint) error {
	if err := ValidTask(c.Task); err != nil {
		return err
	}
	if c.Kind != KindSave && c.Kind != KindBackup {
		return fmt.Errorf("checkpoint: unknown kind %d", c.Kind)
	}
	if c.Seq == 0 {
		return errors.New("checkpoint: seq must be at least 1")
	}
	return nil
}

// EncodeCheckpoint returns the canonical encoding of c (format in doc.go):
// Meta is written sorted by key, Time as UTC nanoseconds, so equal
// checkpoints encode equally whatever their map order or time zone. The
// encoding of a checkpoint with an invalid task name, kind or zero Seq is
// rejected by DecodeCheckpoint; Batch.PutCheckpoint refuses to store one.
func EncodeCheckpoint(c Checkpoint) []byte {
	keys := make([]string, 0, len(c.Meta))
	size := 1 + 3*objects.IDSize + 12*binary.MaxVarintLen64 + len(c.Task) + len(c.Message) + 2
	for k, v := range c.Meta {
		keys = append(keys, k)
		size += 2*binary.MaxVarintLen64 + len(k) + len(v)
	}
	slices.Sort(keys)
	b := make([]byte, 0, size)
	b = append(b, encodingVersion)
	b = append(b, c.Parent[:]...)
	b = appendString(b, c.Task)
	b = binary.AppendUvarint(b, c.Seq)
	b = append(b, c.Root[:]...)
	b = appendTime(b, c.Time)
	b = appendString(b, c.Message)
	b = append(b, byte(c.Kind))
	b = append(b, boolByte(c.Empty))
	for _, v := range [...]uint64{c.Stats.Files, c.Stats.Added, c.Stats.Modified, c.Stats.Deleted, c.Stats.BytesHashed, c.Stats.DurationMs} {
		b = binary.AppendUvarint(b, v)
	}
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		b = appendString(b, k)
		b = appendString(b, c.Meta[k])
	}
	return append(b, c.State[:]...)
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// DecodeCheckpoint parses a checkpoint encoding. It never panics; malformed
// or truncated input, an unsupported version, an invalid task name, a zero
// seq, an unknown kind, a non-boolean empty flag, unsorted or duplicate
// meta keys, and trailing bytes yield an error marked with objects.ErrCorrupt. Meta is
// nil when empty; Time is in UTC. An accepted input re-encodes to exactly
// the same bytes.
func DecodeCheckpoint(b []byte) (Checkpoint, error) {
	r := reader{b: b}
	var c Checkpoint
	r.version()
	c.Parent = r.id()
	c.Task = r.string()
	c.Seq = r.uvarint()
	c.Root = r.id()
	c.Time = r.time()
	c.Message = r.string()
	c.Kind = CheckpointKind(r.byte())
	empty := r.byte()
	c.Empty = empty == 1
	for _, p := range [...]*uint64{&c.Stats.Files, &c.Stats.Added, &c.Stats.Modified, &c.Stats.Deleted, &c.Stats.BytesHashed, &c.Stats.DurationMs} {
		*p = r.uvarint()
	}
	if r.err != nil {
		return Checkpoint{}, r.err
	}
	if empty > 1 {
		return Checkpoint{}, objects.MarkCorrupt(fmt.Errorf("checkpoint: empty flag %d is not 0 or 1", empty))
	}
	if err := validCheckpoint(&c); err != nil {
		return Checkpoint{}, objects.MarkCorrupt(err)
	}
	meta, err := r.meta()
	if err != nil {
		return Checkpoint{}, err
	}
	c.Meta = meta
	c.State = r.id()
	if err := r.end(); err != nil {
		return Checkpoint{}, err
	}
	return c, nil
}

// meta reads the checkpoint meta map: a count, then key/value string pairs
// with keys strictly increasing.
func (r *reader) meta() (map[string]string, error) {
	n := r.count(2)
	if r.err != nil || n == 0 {
		return nil, r.err
	}
	m := make(map[string]string, n)
	prev := ""
	for i := range n {
		k := r.string()
		v := r.string()
		if r.err != nil {
			return nil, r.err
		}
		if i > 0 && k <= prev {
			return nil, objects.MarkCorrupt(fmt.Errorf("checkpoint meta key %d %q is not after %q", i, k, prev))
		}
		m[k] = v
		prev = k
	}
	return m, nil
}

// CheckpointID returns the id of c: objects.Sum(EncodeCheckpoint(c)).
func CheckpointID(c Checkpoint) objects.ID {
	return objects.Sum(EncodeCheckpoint(c))
}
