package engine

import (
	"cmp"
	"context"
	"slices"

	"github.com/ckpt/ckpt/diffview"
	"github.com/ckpt/ckpt/objects"
)

// HistoryOptions select the checkpoints History reports.
type HistoryOptions struct {
	// Task is the task whose checkpoints are searched ("" is DefaultTask);
	// ignored when All is set.
	Task string
	// All searches every task of the store.
	All bool
	// Paths are workspace-relative files or directories; a checkpoint is
	// reported when anything at or below one of them changed against its
	// parent. None (or the root, ".") means the whole workspace; a path
	// that no checkpoint searched holds, or an empty path, is ErrBadRequest.
	Paths []string
}

// HistoryEntry is one checkpoint in which a path of the history changed.
// Diff holds the changes under the history's paths against the
// checkpoint's parent (against nothing for a task's first checkpoint);
// its contents and patch load only when asked for.
type HistoryEntry struct {
	Checkpoint CheckpointInfo
	Diff       *DiffResult
}

// History is the answer to "which checkpoints changed these paths?":
// the entries newest first (by time, then sequence).
type History struct {
	Entries []HistoryEntry
	// Checkpoints is how many checkpoints were compared with their parent;
	// TreesRead how many distinct trees that took. Both grow with the
	// length of the chain and the depth of the paths, not with the
	// size of the workspace: subtrees whose id is equal on both sides
	// are never read.
	Checkpoints int
	TreesRead   int
}

// History compares every checkpoint of a task (or of every task) with its
// parent along the paths given and reports those in which something under
// them changed: a file's or a directory's history, like git log -- PATH.
// It reads only the trees on the paths' way whose ids differ between a
// checkpoint and its parent.
func (e *Engine) History(ctx context.Context, opts HistoryOptions) (*History, error) {
	h, err := e.history(ctx, opts)
	return h, translate(err, e.storeDir)
}

func (e *Engine) history(ctx context.Context, opts HistoryOptions) (*History, error) {
	filter, err := parsePathFilter(opts.Paths)
	if err != nil {
		return nil, err
	}
	tasks, err := e.historyTasks(opts)
	if err != nil {
		return nil, err
	}
	src := &countingTrees{src: e.save.TreeSource(nil), trees: map[objects.ID]objects.Tree{}}
	store := e.storeLoader(ctx)
	h := &History{}
	var searched []objects.ID // the roots compared, newest first within a task
	for _, task := range tasks {
		log, err := e.list(ctx, task)
		if err != nil {
			return nil, err
		}
		roots := make(map[ID]ID, len(log.Checkpoints))
		for _, cp := range log.Checkpoints {
			roots[cp.ID] = cp.Root
			searched = append(searched, objects.ID(cp.Root))
		}
		for _, cp := range log.Checkpoints {
			parentRoot, err := e.parentRoot(cp, roots)
			if err != nil {
				return nil, err
			}
			d, err := e.chainDiff(ctx, src, store, cp, parentRoot, filter)
			if err != nil {
				return nil, err
			}
			h.Checkpoints++
			src.forget()
			if len(d.Changes) == 0 {
				continue
			}
			h.Entries = append(h.Entries, HistoryEntry{Checkpoint: cp, Diff: d})
		}
	}
	if err := requireMatches(e.db, unchanged(filter, h.Entries), "any checkpoint searched", searched...); err != nil {
		return nil, err
	}
	slices.SortStableFunc(h.Entries, func(a, b HistoryEntry) int {
		if c := b.Checkpoint.Time.Compare(a.Checkpoint.Time); c != 0 {
			return c
		}
		return cmp.Compare(b.Checkpoint.Seq, a.Checkpoint.Seq)
	})
	h.TreesRead = src.read
	return h, nil
}

// unchanged is the part of filter that no change of entries lies under:
// the paths whose existence a history has yet to show.
func unchanged(filter diffview.PathFilter, entries []HistoryEntry) diffview.PathFilter {
	var out diffview.PathFilter
	for _, f := range filter {
		if !slices.ContainsFunc(entries, func(en HistoryEntry) bool {
			return slices.ContainsFunc(en.Diff.Changes, func(c Change) bool {
				return diffview.PathFilter{f}.Covers(c.Path) || (c.OldPath != "" && diffview.PathFilter{f}.Covers(c.OldPath))
			})
		}) {
			out = append(out, f)
		}
	}
	return out
}

// chainDiff compares checkpoint cp with its parent's root along filter.
func (e *Engine) chainDiff(ctx context.Context, src diffview.TreeSource, store storeLoader, cp CheckpointInfo, parentRoot ID, filter diffview.PathFilter) (*DiffResult, error) {
	raw, err := diffview.Compare(ctx, src, objects.ID(parentRoot), objects.ID(cp.Root), filter)
	if err != nil {
		return nil, err
	}
	d := &DiffResult{From: cp.Parent, To: cp.ID, places: e.places, before: store, after: store, raw: raw,
		Changes: make([]Change, len(raw))}
	for i, c := range raw {
		d.Changes[i] = publicChange(c)
	}
	return d, nil
}

// historyTasks are the tasks a history searches.
func (e *Engine) historyTasks(opts HistoryOptions) ([]string, error) {
	if !opts.All {
		task, err := taskName(opts.Task)
		return []string{task}, err
	}
	names, err := e.db.Tasks()
	return names, err
}

// parentRoot is the root tree of cp's parent: zero (the empty tree) for a
// task's first checkpoint, looked up in roots or else in the index (a fork
// continues another task's chain).
func (e *Engine) parentRoot(cp CheckpointInfo, roots map[ID]ID) (ID, error) {
	if cp.Parent.IsZero() {
		return ID{}, nil
	}
	if r, ok := roots[cp.Parent]; ok {
		return r, nil
	}
	parent, err := e.checkpoint(objects.ID(cp.Parent))
	if err != nil {
		return ID{}, err
	}
	return ID(parent.Root), nil
}

// countingTrees reads trees through src and keeps those of the last two
// comparisons: walking a chain, a checkpoint's trees are its successor's
// parent trees, so each distinct tree on the paths' way is read once.
type countingTrees struct {
	src   diffview.TreeSource
	trees map[objects.ID]objects.Tree
	prev  map[objects.ID]objects.Tree
	read  int
}

func (c *countingTrees) Tree(id objects.ID) (objects.Tree, error) {
	if t, ok := c.trees[id]; ok {
		return t, nil
	}
	if t, ok := c.prev[id]; ok {
		c.trees[id] = t
		return t, nil
	}
	t, err := c.src.Tree(id)
	if err != nil {
		return objects.Tree{}, err
	}
	c.read++
	c.trees[id] = t
	return t, nil
}

// forget ends one comparison: the trees it read stay for the next one only.
func (c *countingTrees) forget() {
	c.prev, c.trees = c.trees, make(map[objects.ID]objects.Tree, len(c.trees))
}
