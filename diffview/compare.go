package diffview

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/ckpt/ckpt/objects"
)

// TreeSource loads trees by id. Errors, including not-found errors, are
// passed through to the caller of Compare wrapped with %w. Compare never asks
// for the zero id; it calls Tree from one goroutine at a time, so
// implementations need not be safe for concurrent use; and it only reads
// the trees, so a source may share them.
type TreeSource interface {
	Tree(id objects.ID) (objects.Tree, error)
}

// Status is the kind of a Change.
type Status string

// Change statuses.
const (
	StatusAdded      Status = "added"
	StatusModified   Status = "modified"
	StatusDeleted    Status = "deleted"
	StatusTypeChange Status = "typechange" // file became symlink or back
	StatusMode       Status = "mode"       // only the mode bits changed
	StatusRenamed    Status = "renamed"    // same blob, new path (mode may differ)
)

// Side is one side of a Change: the tree entry found at the path.
type Side struct {
	Kind objects.Kind
	Mode uint32
	Size int64
	ID   objects.ID
}

func sideOf(e *objects.Entry) *Side {
	return &Side{Kind: e.Kind, Mode: e.Mode, Size: e.Size, ID: e.ID}
}

// Change is one changed file or symlink. Path is the path on the "to" side
// (the only side for additions, the old path for deletions); OldPath is set
// for renames only. Before is nil for additions, After for deletions. Paths
// are slash-separated and relative to the tree root.
type Change struct {
	Path    string
	OldPath string
	Status  Status
	Before  *Side
	After   *Side
}

// beforePath returns the path of the change on the "from" side.
func (c Change) beforePath() string {
	if c.OldPath != "" {
		return c.OldPath
	}
	return c.Path
}

// Compare returns the changes from tree from to tree to (the zero id is the
// empty tree), sorted by Path in byte order, with exact renames paired and
// limited to the given path filters (nil or empty = everything; see
// NewPathFilter for the rules). Subtrees with equal ids on both sides are
// never loaded, so the cost is proportional to the changed part of the
// trees. Blob contents are never loaded. Errors from src are wrapped with %w;
// malformed trees (entries that break the Tree invariants: names unique and
// sorted, no empty, ".", ".." or slash-containing names) yield an error
// marked with objects.ErrCorrupt; ctx is checked before each tree load.
func Compare(ctx context.Context, src TreeSource, from, to objects.ID, filters []string) ([]Change, error) {
	fs, err := NewPathFilter(filters)
	if err != nil {
		return nil, err
	}
	w := &treeWalker{ctx: ctx, src: src, filters: fs}
	if err := w.diffTrees("", from, to); err != nil {
		return nil, err
	}
	sort.Slice(w.changes, func(i, j int) bool { return w.changes[i].Path < w.changes[j].Path })
	return pairRenames(w.changes), nil
}

// treeWalker accumulates the changes found while walking two trees.
type treeWalker struct {
	ctx     context.Context
	src     TreeSource
	filters PathFilter
	changes []Change
}

func (w *treeWalker) load(dir string, id objects.ID) ([]objects.Entry, error) {
	if id.IsZero() {
		return nil, nil
	}
	if err := w.ctx.Err(); err != nil {
		return nil, err
	}
	t, err := w.src.Tree(id)
	if err != nil {
		return nil, fmt.Errorf("load tree %s for %q: %w", id.Short(), displayDir(dir), err)
	}
	if err := checkEntries(t.Entries); err != nil {
		return nil, fmt.Errorf("tree %s for %q: %w", id.Short(), displayDir(dir), err)
	}
	return t.Entries, nil
}

func displayDir(dir string) string {
	if dir == "" {
		return "."
	}
	return dir
}

func checkEntries(entries []objects.Entry) error {
	for i, e := range entries {
		if e.Name == "" || e.Name == "." || e.Name == ".." || strings.ContainsAny(e.Name, "/\x00") {
			return objects.MarkCorrupt(fmt.Errorf("tree bad entry name %q", e.Name))
		}
		if i > 0 && entries[i-1].Name >= e.Name {
			return objects.MarkCorrupt(fmt.Errorf("tree entries not sorted at %q", e.Name))
		}
		if e.Kind != objects.KindFile && e.Kind != objects.KindSymlink && e.Kind != objects.KindDir {
			return objects.MarkCorrupt(fmt.Errorf("tree entry %q has unknown kind %d", e.Name, e.Kind))
		}
	}
	return nil
}

// diffTrees compares the directories with ids from and to found at dir.
func (w *treeWalker) diffTrees(dir string, from, to objects.ID) error {
	if from == to {
		return nil
	}
	a, err := w.load(dir, from)
	if err != nil {
		return err
	}
	b, err := w.load(dir, to)
	if err != nil {
		return err
	}
	for ea, eb := range objects.Pairs(a, b) {
		if ea != nil && eb != nil && *ea == *eb {
			continue // the same entry on both sides: no change, no path to build
		}
		name := nameOf(ea, eb)
		p := name
		if dir != "" {
			p = dir + "/" + name
		}
		if err := w.diffEntry(p, ea, eb); err != nil {
			return err
		}
	}
	return nil
}

func nameOf(ea, eb *objects.Entry) string {
	if ea != nil {
		return ea.Name
	}
	return eb.Name
}

// diffEntry compares the entries found at path p (either may be nil).
func (w *treeWalker) diffEntry(p string, ea, eb *objects.Entry) error {
	aDir := ea != nil && ea.Kind == objects.KindDir
	bDir := eb != nil && eb.Kind == objects.KindDir
	if aDir || bDir {
		if !w.filters.Overlaps(p) {
			return nil
		}
		var fromID, toID objects.ID
		if aDir {
			fromID = ea.ID
			ea = nil
		}
		if bDir {
			toID = eb.ID
			eb = nil
		}
		if err := w.diffTrees(p, fromID, toID); err != nil {
			return err
		}
		if ea == nil && eb == nil {
			return nil
		}
	}
	if !w.filters.Covers(p) {
		return nil
	}
	if c, ok := leafChange(p, ea, eb); ok {
		w.changes = append(w.changes, c)
	}
	return nil
}

// leafChange classifies the change between two non-directory entries at p.
func leafChange(p string, ea, eb *objects.Entry) (Change, bool) {
	switch {
	case ea == nil:
		return Change{Path: p, Status: StatusAdded, After: sideOf(eb)}, true
	case eb == nil:
		return Change{Path: p, Status: StatusDeleted, Before: sideOf(ea)}, true
	}
	c := Change{Path: p, Before: sideOf(ea), After: sideOf(eb)}
	switch {
	case ea.Kind != eb.Kind:
		c.Status = StatusTypeChange
	case ea.ID != eb.ID:
		c.Status = StatusModified
	case ea.Kind == objects.KindFile && ea.Mode != eb.Mode:
		c.Status = StatusMode
	default:
		return Change{}, false
	}
	return c, true
}
