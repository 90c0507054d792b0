package ui

import (
	"context"
	"time"
)

// WorkspaceRef names the live workspace as the "to" side of a diff.
const WorkspaceRef = "workspace"

// Backend is what the page needs from a checkpoint store. Implementations
// must be safe for concurrent use: the server calls them from one goroutine
// per request. Errors that wrap ErrNotFound are answered with 404, errors
// that wrap ErrBadRequest with 400, all others with 500.
type Backend interface {
	// Tasks lists every task, sorted by name. The page calls it on each
	// load and live update, so it should not read every checkpoint.
	Tasks(ctx context.Context) ([]Task, error)
	// Checkpoints returns at most q.Limit checkpoints of task, newest first,
	// with sequence numbers below q.Before (0: from the newest), and the
	// cursor of the next older page. Its cost must be bounded by the page,
	// not by the task's length.
	Checkpoints(ctx context.Context, task string, q PageQuery) (Page, error)
	// Diff lists the changed files from checkpoint from to checkpoint to (or
	// the live workspace when to is WorkspaceRef), without their contents.
	Diff(ctx context.Context, task, from, to string) ([]FileChange, error)
	// File returns one changed file of Diff(task, from, to) with both sides'
	// bytes (nil for a side that does not exist). ErrNotFound when path did
	// not change. (Paths given to File and History are the names' bytes:
	// the server decodes a path_base64 parameter.)
	File(ctx context.Context, task, from, to, path string) (FileContents, error)
	// History lists the checkpoints of task in which the file at path
	// changed, newest first, each with that change.
	History(ctx context.Context, task, path string) ([]HistoryEntry, error)
	// Plan reports what Restore(req) would do, changing nothing.
	Plan(ctx context.Context, req RestoreRequest) (RestorePlan, error)
	// Restore restores req.Ref, taking a backup checkpoint first.
	Restore(ctx context.Context, req RestoreRequest) (RestoreResult, error)
	// Subscribe delivers store events until ctx ends, then closes the
	// channel. A slow reader may miss events; the page reloads what an
	// event names, so a missed event costs only freshness.
	Subscribe(ctx context.Context) <-chan Event
}

// Task is one named chain of checkpoints.
type Task struct {
	Name        string    `json:"name"`
	Head        string    `json:"head"` // empty when the task has no checkpoints
	Checkpoints int       `json:"checkpoints"`
	First       time.Time `json:"first"`
	Last        time.Time `json:"last"`
	// FirstBad is the first bad checkpoint the task's last bisect found
	// (ckpt bisect records it); empty when none was recorded.
	FirstBad string `json:"first_bad,omitempty"`
}

// Checkpoint kinds.
const (
	KindSave   = "save"
	KindBackup = "backup" // taken automatically before a restore
)

// Checkpoint is one checkpoint with the size of its change from its parent.
type Checkpoint struct {
	ID       string    `json:"id"`
	Parent   string    `json:"parent"`
	Seq      uint64    `json:"seq"`
	Time     time.Time `json:"time"`
	Message  string    `json:"message"`
	Kind     string    `json:"kind"`
	Empty    bool      `json:"empty"` // the files equal the parent's
	Head     bool      `json:"head"`
	HasState bool      `json:"has_state"`
	Files    uint64    `json:"files"` // files in the checkpoint
	Added    uint64    `json:"added"`
	Modified uint64    `json:"modified"`
	Deleted  uint64    `json:"deleted"`
	Bytes    uint64    `json:"bytes"` // bytes of new or changed content
}

// PageQuery selects a page of a task's checkpoints.
type PageQuery struct {
	Before uint64 // only sequence numbers below this; 0 = from the newest
	Limit  int    // at most this many; the server caps it at MaxPage
}

// Page is one page of checkpoints, newest first.
type Page struct {
	Checkpoints []Checkpoint `json:"checkpoints"`
	Next        uint64       `json:"next"` // Before of the next older page; 0 when none
}

// File change statuses.
const (
	StatusAdded      = "added"
	StatusModified   = "modified"
	StatusDeleted    = "deleted"
	StatusRenamed    = "renamed"
	StatusTypeChange = "typechange"
	StatusMode       = "mode"
)

// FileChange is one changed file. Where a name is not valid UTF-8 (JSON
// would write U+FFFD for each bad byte, and two names could read alike),
// its bytes travel beside it in standard base64 (package lossless): the
// Backend sets PathBase64 and OldPathBase64 from lossless.Base64, and the
// page sends path_base64 back to name the file.
type FileChange struct {
	Path          string  `json:"path"`
	PathBase64    *string `json:"path_base64,omitempty"`
	OldPath       string  `json:"old_path,omitempty"` // renames only
	OldPathBase64 *string `json:"old_path_base64,omitempty"`
	Status        string  `json:"status"`
	BeforeSize    int64   `json:"before_size"`
	AfterSize     int64   `json:"after_size"`
}

// HistoryEntry is a checkpoint in which a file changed, and the change.
type HistoryEntry struct {
	Checkpoint Checkpoint `json:"checkpoint"`
	Change     FileChange `json:"change"`
}

// FileContents is a change with the bytes of both sides.
type FileContents struct {
	FileChange
	Before, After []byte // nil for a side that does not exist
}

// Restore scopes.
const (
	OnlyWorkspace = "workspace"
	OnlyState     = "state"
	OnlyBoth      = "both"
)

// RestoreRequest names what to restore.
type RestoreRequest struct {
	Task  string   `json:"task"`
	Ref   string   `json:"ref"`
	Only  string   `json:"only"`  // OnlyWorkspace (default), OnlyState or OnlyBoth
	Paths []string `json:"paths"` // restore only these files; empty: everything
	// PathsBase64 names more files by their bytes (a change's
	// path_base64). The server decodes them into Paths before the Backend
	// sees the request, so a Backend reads Paths only.
	PathsBase64 []string `json:"paths_base64,omitempty"`
}

// Conflict is a path a restore will not touch, with the reason.
type Conflict struct {
	Path       string  `json:"path"`
	PathBase64 *string `json:"path_base64,omitempty"` // as in FileChange
	Reason     string  `json:"reason"`
}

// RestorePlan is a dry run of a restore. WriteBase64 and DeleteBase64
// hold every path of Write and Delete in base64, in order, when one of
// them is not valid UTF-8 (lossless.Base64List); the Backend sets them.
type RestorePlan struct {
	Write        []string   `json:"write"`
	WriteBase64  []string   `json:"write_base64,omitempty"`
	Delete       []string   `json:"delete"`
	DeleteBase64 []string   `json:"delete_base64,omitempty"`
	Conflicts    []Conflict `json:"conflicts"`
	// Backup is true when the restore will first save a backup checkpoint
	// of the current workspace, which undo restores.
	Backup bool `json:"backup"`
	State  bool `json:"state"` // the task's state will be rewound too
}

// RestoreResult is what a restore did; the *Base64 lists are as in
// RestorePlan.
type RestoreResult struct {
	Restored      string     `json:"restored"`
	Backup        string     `json:"backup"` // restore it to undo; empty when none was taken
	Written       []string   `json:"written"`
	WrittenBase64 []string   `json:"written_base64,omitempty"`
	Deleted       []string   `json:"deleted"`
	DeletedBase64 []string   `json:"deleted_base64,omitempty"`
	Conflicts     []Conflict `json:"conflicts"`
}

// Event types.
const (
	EventCheckpoint = "checkpoint"
	EventRestore    = "restore"
)

// Event tells the page that a task changed.
type Event struct {
	Type string `json:"type"`
	Task string `json:"task"`
	ID   string `json:"id"` // the new head or the restored checkpoint
}
