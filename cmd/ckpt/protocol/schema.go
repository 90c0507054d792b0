package protocol

import (
	"encoding/base64"
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/lossless"
)

// SaveJSON is the save command's JSON shape.
type SaveJSON struct {
	ID      string        `json:"id"`
	Parent  string        `json:"parent"`
	Task    string        `json:"task"`
	Seq     uint64        `json:"seq"`
	Created bool          `json:"created"`
	Empty   bool          `json:"empty"`
	Kind    string        `json:"kind"`
	Stats   StatsJSON     `json:"stats"`
	Skipped []SkippedJSON `json:"skipped"`
	// BackgroundPID is the process this save started to compress what it
	// stored uncompressed (see the CLI's background-recompress), when it started one.
	BackgroundPID int `json:"background_pid,omitempty"`
	SettledJSON
}

type StatsJSON struct {
	Files       uint64 `json:"files"`
	Added       uint64 `json:"added"`
	Modified    uint64 `json:"modified"`
	Deleted     uint64 `json:"deleted"`
	BytesHashed uint64 `json:"bytes_hashed"`
	DurationMs  int64  `json:"duration_ms"`
}

type SkippedJSON struct {
	Path       string  `json:"path"`
	PathBase64 *string `json:"path_base64,omitempty"` // path's bytes when it is not valid UTF-8 (package lossless)
	Reason     string  `json:"reason"`
	Error      string  `json:"error,omitempty"`
	// Kept: unreadable, and the checkpoint holds the version last read
	// (not recorded as deleted).
	Kept bool `json:"kept,omitempty"`
}

// SaveView is the JSON shape of a save result.
func SaveView(res *engine.SaveResult) SaveJSON {
	out := SaveJSON{
		ID: res.ID.String(), Parent: res.Parent.Text(), Task: res.Task, Seq: res.Seq,
		Created: res.Created, Empty: res.Empty, Kind: string(res.Kind),
		Stats: StatsJSON{Files: res.Stats.Files, Added: res.Stats.Added, Modified: res.Stats.Modified,
			Deleted: res.Stats.Deleted, BytesHashed: res.Stats.BytesHashed, DurationMs: res.Stats.Duration.Milliseconds()},
		Skipped:     make([]SkippedJSON, 0, len(res.Skipped)),
		SettledJSON: SettledView(res.Settled),
	}
	for _, s := range res.Skipped {
		sj := SkippedJSON{Path: s.Path, PathBase64: lossless.Base64(s.Path), Reason: s.Reason, Kept: s.Kept}
		if s.Err != nil {
			sj.Error = s.Err.Error()
		}
		out.Skipped = append(out.Skipped, sj)
	}
	return out
}

// CheckpointJSON is one checkpoint in list and show output.
type CheckpointJSON struct {
	ID      string            `json:"id"`
	Seq     uint64            `json:"seq"`
	Parent  string            `json:"parent"`
	Task    string            `json:"task"`
	Time    time.Time         `json:"time"`
	Message string            `json:"message"`
	Kind    string            `json:"kind"`
	Empty   bool              `json:"empty"`
	Head    bool              `json:"head"`
	Meta    map[string]string `json:"meta"`
	Root    string            `json:"root"`
	State   string            `json:"state,omitempty"`
	Stats   StatsJSON         `json:"stats"`
}

func CheckpointView(c engine.CheckpointInfo) CheckpointJSON {
	meta := c.Meta
	if meta == nil {
		meta = map[string]string{}
	}
	return CheckpointJSON{
		ID: c.ID.String(), Seq: c.Seq, Parent: c.Parent.Text(), Task: c.Task, Time: c.Time,
		Message: c.Message, Kind: string(c.Kind), Empty: c.Empty, Head: c.Head, Meta: meta,
		Root: c.Root.String(), State: c.State.Text(),
		Stats: StatsJSON{Files: c.Stats.Files, Added: c.Stats.Added, Modified: c.Stats.Modified,
			Deleted: c.Stats.Deleted, BytesHashed: c.Stats.BytesHashed, DurationMs: c.Stats.Duration.Milliseconds()},
	}
}

// LogJSON is the list command's JSON shape.
type LogJSON struct {
	Task        string           `json:"task"`
	Head        string           `json:"head"`
	Checkpoints []CheckpointJSON `json:"checkpoints"`
}

func LogView(log *engine.Log) LogJSON {
	out := LogJSON{Task: log.Task, Head: log.Head.Text(), Checkpoints: make([]CheckpointJSON, 0, len(log.Checkpoints))}
	for _, c := range log.Checkpoints {
		out.Checkpoints = append(out.Checkpoints, CheckpointView(c))
	}
	return out
}

// TaskJSON is one task in the tasks command's JSON shape.
type TaskJSON struct {
	Name        string    `json:"name"`
	Head        string    `json:"head"`
	Checkpoints int       `json:"checkpoints"`
	First       time.Time `json:"first"`
	Last        time.Time `json:"last"`
	Exclusive   int64     `json:"exclusive_bytes"`
}

func TasksView(tasks []engine.TaskInfo) map[string][]TaskJSON {
	out := make([]TaskJSON, 0, len(tasks))
	for _, t := range tasks {
		out = append(out, TaskJSON{Name: t.Name, Head: t.Head.Text(), Checkpoints: t.Checkpoints, First: t.First, Last: t.Last,
			Exclusive: t.ExclusiveBytes})
	}
	return map[string][]TaskJSON{"tasks": out}
}

// LsJSON is the ls command's JSON shape.
type LsJSON struct {
	Entries []EntryJSON `json:"entries"`
}

type EntryJSON struct {
	Path       string  `json:"path"`
	PathBase64 *string `json:"path_base64,omitempty"` // path's bytes when it is not valid UTF-8
	Kind       string  `json:"kind"`
	Mode       string  `json:"mode"`
	Size       int64   `json:"size"`
	ID         string  `json:"id"`
}

func LsView(entries []engine.LsEntry) LsJSON {
	out := make([]EntryJSON, 0, len(entries))
	for _, e := range entries {
		out = append(out, EntryJSON{Path: e.Path, PathBase64: lossless.Base64(e.Path), Kind: string(e.Kind), Mode: fmt.Sprintf("%04o", e.Mode), Size: e.Size, ID: e.ID.String()})
	}
	return LsJSON{out}
}

// DiffJSON is the diff command's JSON shape.
type DiffJSON struct {
	From  string     `json:"from"`
	To    string     `json:"to"`
	Files []FileJSON `json:"files"` // contents null for a side that does not exist or is too large, and here for a binary one

	encoded []byte // the view as encodeDiff encoded it, nil when it did not
}

// FileJSON is one change of a diff, with the bytes of its names that are
// not valid UTF-8, and of a side that is text but not valid UTF-8 (a
// Latin-1 file): its Before or After is then null and its BeforeBase64 or
// AfterBase64 holds it, so that no byte is lost to U+FFFD.
type FileJSON struct {
	engine.FileDiff
	PathBase64     *string `json:"path_base64,omitempty"`
	AbsoluteBase64 *string `json:"absolute_base64,omitempty"`
	OldPathBase64  *string `json:"old_path_base64,omitempty"`
	BeforeBase64   *string `json:"before_base64,omitempty"`
	AfterBase64    *string `json:"after_base64,omitempty"`
}

// DiffView describes every change with its (text) contents.
func DiffView(res *engine.DiffResult, format engine.DiffFormat) (DiffJSON, error) {
	files, err := res.Files(format)
	if err != nil {
		return DiffJSON{}, err
	}
	out := diffHead(res)
	out.Files = make([]FileJSON, len(files))
	for i, f := range files {
		out.Files[i] = fileView(f)
	}
	return out, nil
}

// diffHead is the view of res without its files.
func diffHead(res *engine.DiffResult) DiffJSON {
	to := res.To.Text()
	if res.ToWorkspace {
		to = engine.WorkspaceRef
	}
	return DiffJSON{From: res.From.String(), To: to}
}

// fileView is the JSON shape of one change.
func fileView(f engine.FileDiff) FileJSON {
	v := FileJSON{FileDiff: f, PathBase64: lossless.Base64(f.Path), AbsoluteBase64: lossless.Base64(f.Absolute),
		OldPathBase64: lossless.Base64(f.OldPath)}
	v.Before, v.BeforeBase64 = keptText(f.Before)
	v.After, v.AfterBase64 = keptText(f.After)
	return v
}

// keptText is a side's text as it is when it is valid UTF-8, else (nil
// and) its bytes in base64; nil for no text.
func keptText(side *string) (text, b64 *string) {
	if side == nil || utf8.ValidString(*side) {
		return side, nil
	}
	s := base64.StdEncoding.EncodeToString([]byte(*side))
	return nil, &s
}

// RestoreJSON is the restore command's JSON shape.
// ConflictJSON is a path a restore left alone, and why.
type ConflictJSON struct {
	Path       string  `json:"path"`
	PathBase64 *string `json:"path_base64,omitempty"` // path's bytes when it is not valid UTF-8
	Reason     string  `json:"reason"`
}

// ConflictView is the JSON shape of a conflict whose reason is given.
func ConflictView(path, reason string) ConflictJSON {
	return ConflictJSON{Path: path, PathBase64: lossless.Base64(path), Reason: reason}
}

type RestoreJSON struct {
	Restored     string   `json:"restored"`
	Backup       string   `json:"backup"`
	Written      int      `json:"written"`
	Deleted      int      `json:"deleted"`
	WrittenPaths []string `json:"written_paths"`
	DeletedPaths []string `json:"deleted_paths"`
	// WrittenPathsBase64 and DeletedPathsBase64 are every path of their
	// list, in order, when one is not valid UTF-8 (package lossless).
	WrittenPathsBase64 []string `json:"written_paths_base64,omitempty"`
	DeletedPathsBase64 []string `json:"deleted_paths_base64,omitempty"`
	// DiscardedPaths is what --force destroyed that no checkpoint holds
	// (engine.RestoreResult.Discarded), DiscardedPathsBase64 their bytes
	// as the others' when one is not valid UTF-8.
	DiscardedPaths       []string       `json:"discarded_paths"`
	DiscardedPathsBase64 []string       `json:"discarded_paths_base64,omitempty"`
	Conflicts            []ConflictJSON `json:"conflicts"`
	State                string         `json:"state,omitempty"`
	DryRun               bool           `json:"dry_run"`
	DurationMs           int64          `json:"duration_ms"`
	PhasesMs             PhasesJSON     `json:"phases_ms"`
}

// PhasesJSON is engine.RestorePhases in milliseconds (to 0.01 ms).
type PhasesJSON struct {
	Backup  float64 `json:"backup"`
	Plan    float64 `json:"plan"`
	Journal float64 `json:"journal"`
	Write   float64 `json:"write"`
	Place   float64 `json:"place"`
	Flush   float64 `json:"flush"`
	Finish  float64 `json:"finish"`
}

// PhasesView is the JSON shape of a restore's phases.
func PhasesView(p engine.RestorePhases) PhasesJSON {
	ms := func(d time.Duration) float64 { return math.Round(float64(d)/1e4) / 100 }
	return PhasesJSON{Backup: ms(p.Backup), Plan: ms(p.Plan), Journal: ms(p.Journal), Write: ms(p.Write),
		Place: ms(p.Place), Flush: ms(p.Flush), Finish: ms(p.Finish)}
}

// RestoreView is the JSON shape of a restore result.
func RestoreView(res *engine.RestoreResult, dryRun bool) RestoreJSON {
	conflicts := make([]ConflictJSON, len(res.Conflicts))
	for i, c := range res.Conflicts {
		conflicts[i] = ConflictView(c.Path, ConflictReason(c))
	}
	return RestoreJSON{
		Restored: res.Restored.String(), Backup: res.Backup.Text(),
		Written: len(res.Written), Deleted: len(res.Deleted),
		WrittenPaths: nonNil(res.Written), DeletedPaths: nonNil(res.Deleted),
		WrittenPathsBase64: lossless.Base64List(res.Written), DeletedPathsBase64: lossless.Base64List(res.Deleted),
		DiscardedPaths: nonNil(res.Discarded), DiscardedPathsBase64: lossless.Base64List(res.Discarded),
		Conflicts: conflicts, State: res.State.Text(), DryRun: dryRun, DurationMs: res.Duration.Milliseconds(),
		PhasesMs: PhasesView(res.Phases),
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// conflictAdvice is what the restore flags can do about a conflict.
var conflictAdvice = map[engine.ConflictKind]string{
	engine.ConflictUncaptured: "; use --force to overwrite it",
	engine.ConflictUnsaved:    "; use --force to discard it, or restore with a backup",
	engine.ConflictUnread:     "; make it readable and restore again, or use --force to replace it",
	engine.ConflictDirHolds:   "; use --force to remove them",
	engine.ConflictChanged:    "; save it, then restore again to replace it",
}

// ConflictReason is a conflict's reason with the advice its kind implies.
func ConflictReason(c engine.Conflict) string { return c.Reason + conflictAdvice[c.Kind] }

// NoticesJSON are the fields an open adds to every JSON document.
type NoticesJSON struct {
	SettledJSON
	PendingRestore *JournalJSON `json:"pending_restore,omitempty"`
}

// SettledJSON is the interrupted restore an operation settled before it
// began: completed, or discarded because its task moved on.
type SettledJSON struct {
	CompletedRestore *RestoreJSON   `json:"completed_restore,omitempty"`
	DiscardedRestore *DiscardedJSON `json:"discarded_restore,omitempty"`
}

// SettledView is the JSON shape of a settled restore (none when s is nil).
func SettledView(s *engine.SettledRestore) SettledJSON {
	switch {
	case s == nil:
		return SettledJSON{}
	case s.Completed != nil:
		view := RestoreView(s.Completed, false)
		return SettledJSON{CompletedRestore: &view}
	}
	return SettledJSON{DiscardedRestore: &DiscardedJSON{Target: s.Journal.Target.Text(), Task: s.Journal.Task, Reason: s.Discarded}}
}

// DiscardedJSON is an interrupted restore whose journal was dropped
// without replaying it, because its task moved on.
type DiscardedJSON struct {
	Task   string `json:"task"`
	Target string `json:"target"`
	Reason string `json:"reason"`
}

// JournalJSON is an interrupted restore's journal.
type JournalJSON struct {
	Task   string   `json:"task"`
	Target string   `json:"target"`
	Backup string   `json:"backup"`
	Paths  []string `json:"paths,omitempty"`
	// PathsBase64 is every path, in order, when one is not valid UTF-8.
	PathsBase64 []string  `json:"paths_base64,omitempty"`
	Started     time.Time `json:"started"`
}

// JournalView is the JSON shape of an interrupted restore's journal.
func JournalView(j *engine.Journal) *JournalJSON {
	return &JournalJSON{Task: j.Task, Target: j.Target.Text(), Backup: j.Backup.Text(), Paths: j.Paths,
		PathsBase64: lossless.Base64List(j.Paths), Started: j.Started}
}

// ErrorJSON is the JSON document of a failed command.
type ErrorJSON struct {
	Error ErrorBody `json:"error"`
}

type ErrorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}
