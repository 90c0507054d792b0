package index

import (
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
