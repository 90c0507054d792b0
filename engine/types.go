package engine

import (
	"errors"
	"time"

	"github.com/ckpt/ckpt/diffview"
	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/objects"
	"github.com/ckpt/ckpt/walker"
)

// CheckpointKind tells a checkpoint the host asked for from the backup a
// restore takes first.
type CheckpointKind string

// Checkpoint kinds.
const (
	KindSave   CheckpointKind = "save"
	KindBackup CheckpointKind = "backup"
)

// Stats summarises what a save found, relative to the task's previous head.
type Stats struct {
	Files       uint64 // files (and symlinks) in the checkpoint
	Added       uint64
	Modified    uint64
	Deleted     uint64
	BytesHashed uint64 // bytes read and hashed for this save: by it and, watched, by the presaves since the previous one (see Options.Watch)
	Duration    time.Duration
}

// CheckpointInfo is one checkpoint of a task's chain.
type CheckpointInfo struct {
	ID      ID
	Parent  ID // zero for the first checkpoint of a task
	Task    string
	Seq     uint64 // 1-based position in the task (@N)
	Time    time.Time
	Message string
	Kind    CheckpointKind
	Empty   bool // its files equal its parent's
	Meta    map[string]string
	State   ID // the host's state blob (read it with ReadState); zero when none
	Root    ID // the root tree of its files
	Stats   Stats
	Head    bool // it is its task's head
}

// Skipped is a path a save could not read or would not capture, with the
// reason. An unreadable path (a file the save may not read, a directory it
// may not list) that an earlier save read keeps, in the checkpoint, the
// version read last (Kept), as git keeps an index entry it cannot
// refresh: it is not recorded as deleted. Any other is left out.
type Skipped struct {
	Path   string // slash-separated, relative to the workspace
	Reason string // "fifo", "socket", "device", "too large", "unreadable", "vanished" or "unknown type"
	Err    error  // the underlying error for unreadable and vanished paths
	Kept   bool   // unreadable, and the checkpoint holds its last version read
}

// EntryKind is the kind of a checkpointed path.
type EntryKind string

// Entry kinds.
const (
	EntryFile    EntryKind = "file"
	EntrySymlink EntryKind = "symlink"
	EntryDir     EntryKind = "dir"
)

// LsEntry is one entry listed by Ls.
type LsEntry struct {
	Path string // relative to the workspace
	Name string
	Kind EntryKind
	Mode uint32 // permission bits
	Size int64  // content length (a symlink: its target's); 0 for a directory
	ID   ID     // content blob, or tree for a directory
}

// IsDir reports whether the entry is a directory.
func (e LsEntry) IsDir() bool { return e.Kind == EntryDir }

func publicKind(k index.CheckpointKind) CheckpointKind {
	if k == index.KindBackup {
		return KindBackup
	}
	return KindSave
}

func publicStats(s index.Stats) Stats {
	return Stats{Files: s.Files, Added: s.Added, Modified: s.Modified, Deleted: s.Deleted,
		BytesHashed: s.BytesHashed, Duration: time.Duration(s.DurationMs) * time.Millisecond}
}

func checkpointInfo(id ID, cp index.Checkpoint, head bool) CheckpointInfo {
	return CheckpointInfo{ID: id, Parent: ID(cp.Parent), Task: cp.Task, Seq: cp.Seq, Time: cp.Time,
		Message: cp.Message, Kind: publicKind(cp.Kind), Empty: cp.Empty, Meta: cp.Meta, State: ID(cp.State),
		Root: ID(cp.Root), Stats: publicStats(cp.Stats), Head: head}
}

func publicSkipped(in []walker.Skipped, kept map[string]bool) []Skipped {
	out := make([]Skipped, len(in))
	for i, s := range in {
		out[i] = Skipped{Path: s.Path, Reason: s.Reason, Err: s.Err, Kept: kept[s.Path]}
	}
	return out
}

// unreadPaths are the paths a scan could not read (restore.Applier.Unread).
func unreadPaths(skipped []walker.Skipped) map[string]bool {
	var unread map[string]bool
	for _, s := range skipped {
		if s.Reason == walker.ReasonUnreadable {
			if unread == nil {
				unread = map[string]bool{}
			}
			unread[s.Path] = true
		}
	}
	return unread
}

// keptPaths returns the unreadable paths of skipped that the tree rooted at
// root holds: the versions a save kept of paths it could not read.
func keptPaths(src diffview.TreeSource, root objects.ID, skipped []walker.Skipped) (map[string]bool, error) {
	kept := unreadPaths(skipped)
	for p := range kept {
		_, err := findEntry(src, root, p)
		if errors.Is(err, ErrBadRequest) {
			delete(kept, p) // not in the tree: left out
		} else if err != nil {
			return nil, err
		}
	}
	return kept, nil
}

func entryKind(k objects.Kind) EntryKind {
	switch k {
	case objects.KindDir:
		return EntryDir
	case objects.KindSymlink:
		return EntrySymlink
	}
	return EntryFile
}

func lsEntry(p string, e objects.Entry) LsEntry {
	return LsEntry{Path: p, Name: e.Name, Kind: entryKind(e.Kind), Mode: e.Mode, Size: e.Size, ID: ID(e.ID)}
}

// ChangeStatus says how a path changed.
type ChangeStatus string

// Change statuses.
const (
	StatusAdded      ChangeStatus = "added"
	StatusModified   ChangeStatus = "modified"
	StatusDeleted    ChangeStatus = "deleted"
	StatusTypeChange ChangeStatus = "typechange" // a file became a symlink or back
	StatusMode       ChangeStatus = "mode"       // only the mode bits changed
	StatusRenamed    ChangeStatus = "renamed"    // same content, new path (the mode may differ)
)

// ChangeSide is one side of a Change: the entry found at the path.
type ChangeSide struct {
	Kind EntryKind
	Mode uint32
	Size int64
	ID   ID
}

// Change is one changed path. Before is nil for an added path, After for a
// deleted one; OldPath is set for a rename.
type Change struct {
	Path    string
	OldPath string
	Status  ChangeStatus
	Before  *ChangeSide
	After   *ChangeSide
}

func publicSide(s *diffview.Side) *ChangeSide {
	if s == nil {
		return nil
	}
	return &ChangeSide{Kind: entryKind(s.Kind), Mode: s.Mode, Size: s.Size, ID: ID(s.ID)}
}

func publicChange(c diffview.Change) Change {
	return Change{Path: c.Path, OldPath: c.OldPath, Status: ChangeStatus(c.Status), Before: publicSide(c.Before), After: publicSide(c.After)}
}
