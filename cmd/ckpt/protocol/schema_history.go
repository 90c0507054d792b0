package protocol

import (
	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/lossless"
)

// HistoryJSON is the log command's JSON shape: the checkpoints in which a
// path changed, newest first, with the changes under the paths.
type HistoryJSON struct {
	Entries     []HistoryEntryJSON `json:"entries"`
	Checkpoints int                `json:"checkpoints_compared"`
	TreesRead   int                `json:"trees_read"`
}

// HistoryEntryJSON is one checkpoint of a history and its changes.
type HistoryEntryJSON struct {
	Checkpoint CheckpointJSON      `json:"checkpoint"`
	Changes    []HistoryChangeJSON `json:"changes"`
}

// HistoryChangeJSON is one changed path: status, sizes before and after
// (-1 for a side that does not exist).
type HistoryChangeJSON struct {
	Path          string  `json:"path"`
	PathBase64    *string `json:"path_base64,omitempty"` // path's bytes when it is not valid UTF-8 (package lossless)
	OldPath       string  `json:"old_path,omitempty"`
	OldPathBase64 *string `json:"old_path_base64,omitempty"`
	Status        string  `json:"status"`
	Before        int64   `json:"size_before"`
	After         int64   `json:"size_after"`
}

// HistoryView is the JSON shape of a history.
func HistoryView(h *engine.History) HistoryJSON {
	out := HistoryJSON{Entries: make([]HistoryEntryJSON, len(h.Entries)), Checkpoints: h.Checkpoints, TreesRead: h.TreesRead}
	for i, e := range h.Entries {
		changes := make([]HistoryChangeJSON, len(e.Diff.Changes))
		for j, c := range e.Diff.Changes {
			changes[j] = HistoryChangeJSON{Path: c.Path, PathBase64: lossless.Base64(c.Path), OldPath: c.OldPath,
				OldPathBase64: lossless.Base64(c.OldPath), Status: string(c.Status), Before: SideSize(c.Before), After: SideSize(c.After)}
		}
		out.Entries[i] = HistoryEntryJSON{Checkpoint: CheckpointView(e.Checkpoint), Changes: changes}
	}
	return out
}

// SideSize is the size of one side of a change, -1 when it does not exist.
func SideSize(s *engine.ChangeSide) int64 {
	if s == nil {
		return -1
	}
	return s.Size
}

// ExportJSON is the export command's JSON shape.
type ExportJSON struct {
	Checkpoint    string         `json:"checkpoint"`
	Dir           string         `json:"dir,omitempty"`
	DirBase64     *string        `json:"dir_base64,omitempty"` // dir's bytes when it is not valid UTF-8 (package lossless)
	Written       []string       `json:"written_paths"`
	WrittenBase64 []string       `json:"written_paths_base64,omitempty"` // every written path, in order, when one is not valid UTF-8
	Conflicts     []ConflictJSON `json:"conflicts"`
}

// ExportView is the JSON shape of an export.
func ExportView(res *engine.ExportResult) ExportJSON {
	out := ExportJSON{Checkpoint: res.Checkpoint.String(), Dir: res.Dir, DirBase64: lossless.Base64(res.Dir), Written: res.Written,
		WrittenBase64: lossless.Base64List(res.Written), Conflicts: []ConflictJSON{}}
	if out.Written == nil {
		out.Written = []string{}
	}
	for _, c := range res.Conflicts {
		out.Conflicts = append(out.Conflicts, ConflictView(c.Path, c.Reason))
	}
	return out
}

// BisectJSON is the bisect command's JSON shape.
type BisectJSON struct {
	FirstBad   CheckpointJSON      `json:"first_bad"`
	Candidates []CheckpointJSON    `json:"candidates,omitempty"`
	Steps      []BisectStepJSON    `json:"steps"`
	Changes    []HistoryChangeJSON `json:"changes"`
}

// BisectStepJSON is one tested checkpoint.
type BisectStepJSON struct {
	Seq     uint64 `json:"seq"`
	ID      string `json:"id"`
	Verdict string `json:"verdict"`
}

// BisectView is the JSON shape of a bisect result.
func BisectView(res *engine.BisectResult) BisectJSON {
	out := BisectJSON{FirstBad: CheckpointView(res.FirstBad), Steps: make([]BisectStepJSON, len(res.Steps))}
	for _, c := range res.Candidates {
		out.Candidates = append(out.Candidates, CheckpointView(c))
	}
	for i, s := range res.Steps {
		out.Steps[i] = BisectStepJSON{Seq: s.Checkpoint.Seq, ID: s.Checkpoint.ID.String(), Verdict: s.Verdict.String()}
	}
	out.Changes = HistoryView(&engine.History{Entries: []engine.HistoryEntry{{Checkpoint: res.FirstBad, Diff: res.Diff}}}).Entries[0].Changes
	return out
}
