package restore

import (
	"context"
	"path"

	"github.com/ckpt/ckpt/diffview"
	"github.com/ckpt/ckpt/internal/osfs"
	"github.com/ckpt/ckpt/objects"
)

// opKind is one step of a restore.
type opKind uint8

const (
	opRemove    opKind = iota // remove a file or symlink
	opRemoveDir               // remove a directory whose captured contents were removed
	opMkdir                   // create a directory
	opWrite                   // write a file's content and mode
	opLink                    // create a symlink
	opChmod                   // change a file's mode only
	opDirMode                 // set a directory's mode, after its contents are in place
)

// op is one step: the path and, for creations, the target's entry.
type op struct {
	kind opKind
	path string
	ent  objects.Entry
	// replaced is set on removals whose path the target fills with another kind.
	replaced bool
	// fresh is set on creations at a path the current tree does not capture:
	// something uncaptured (an ignored or skipped file) may stand there.
	fresh bool
	// kept is, on a name clash, the name of the target entry restored instead.
	kept string
	// swept is set on removals of temporaries (inTemp) that only the
	// sweep plans: the filter does not cover them, or the plan is Sweep's.
	swept bool
	// opens is set on a directory's mode that gives its owner the write
	// or search permission the current mode withholds: it is set before
	// anything below the directory is removed or written, which its
	// current mode would refuse; every other mode is set after.
	opens bool
	// discards is set, as Apply writes it, on a write that Force lets
	// replace content no checkpoint captures (unsaved or unread): once in
	// place, the path's old content is Discarded.
	discards bool
}

// Plan is the change from the current tree to the target tree, in
// execution order: removals deepest first, then directories top-down, then
// file contents (in parallel), then directory modes deepest first.
type Plan struct {
	removes  []op
	mkdirs   []op
	writes   []op
	dirModes []op
	clashes  []op // target entries left out: their name clashes with another's
}

// planner walks the current and the target tree together, skipping every
// subtree whose id is equal on both sides.
type planner struct {
	ctx    context.Context
	src    diffview.TreeSource
	filter diffview.PathFilter
	names  osfs.NameRules
	plan   Plan
	// writesOnly plans no removal (UnsavedPaths reads the writes only):
	// the subtrees only the current tree holds are not walked.
	writesOnly bool
	// sweep also plans the removal of every restore temporary (inTemp)
	// the walk meets that the target does not hold, in the directories
	// above the filter's paths too: where an interrupted restore of those
	// paths made them.
	sweep bool
}

// NewPlan computes the steps that turn tree cur into tree tgt in a
// workspace whose file system matches names by rules names: of target
// entries it cannot tell apart, one is restored (the one the workspace
// holds, else the first in byte order) and the others become
// ConflictNameClash conflicts. With sweep (the completion of an
// interrupted restore) it also removes the temporaries a restore leaves
// (TempPrefix) in each directory above filter's paths, where a restore
// of those paths makes them too; below them, and everywhere without a
// filter, the plan removes them anyway, as entries tgt does not hold.
func NewPlan(ctx context.Context, src diffview.TreeSource, cur, tgt objects.ID, filter diffview.PathFilter, names osfs.NameRules, sweep bool) (*Plan, error) {
	p := &planner{ctx: ctx, src: src, filter: filter, names: names, sweep: sweep}
	if err := p.dir("", cur, tgt); err != nil {
		return nil, err
	}
	return &p.plan, nil
}

// Sweep plans the removal of the temporaries a restore leaves (TempPrefix)
// from tree cur, in every directory filter overlaps (all of them without
// a filter), and of nothing else: for a journal dropped without its
// restore completed, the temporaries that completion (NewPlan with sweep)
// would have removed.
func Sweep(ctx context.Context, src diffview.TreeSource, cur objects.ID, filter diffview.PathFilter) (*Plan, error) {
	p := &planner{ctx: ctx, src: src, filter: filter, sweep: true}
	if err := p.sweepDir("", cur); err != nil {
		return nil, err
	}
	for i := range p.plan.removes {
		p.plan.removes[i].swept = true
	}
	return &p.plan, nil
}

// sweepDir walks the directories of tree id at dir that the filter
// overlaps, and plans the removal of the temporaries there.
func (p *planner) sweepDir(dir string, id objects.ID) error {
	if err := p.ctx.Err(); err != nil {
		return err
	}
	t, err := p.tree(id)
	if err != nil {
		return err
	}
	for _, e := range t.Entries {
		rel := path.Join(dir, e.Name)
		switch {
		case isTempName(e.Name):
			err = p.remove(rel, e, false)
		case e.Kind == objects.KindDir && p.filter.Overlaps(rel):
			err = p.sweepDir(rel, e.ID)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// covers reports whether the plan may remove rel: the filter covers it,
// or it is a temporary (or lies in one) and the plan sweeps them.
func (p *planner) covers(rel string) bool {
	return p.filter.Covers(rel) || p.sweep && inTemp(rel)
}

func (p *planner) tree(id objects.ID) (objects.Tree, error) {
	if id.IsZero() {
		return objects.Tree{}, nil
	}
	return p.src.Tree(id)
}

func (p *planner) dir(dir string, cur, tgt objects.ID) error {
	if cur == tgt {
		return nil
	}
	if err := p.ctx.Err(); err != nil {
		return err
	}
	ct, err := p.tree(cur)
	if err != nil {
		return err
	}
	tt, err := p.tree(tgt)
	if err != nil {
		return err
	}
	clash := clashes(p.names, tt.Entries, ct.Entries)
	for c, t := range objects.Pairs(ct.Entries, tt.Entries) {
		if t != nil && clash[t.Name] != "" {
			if rel := path.Join(dir, t.Name); p.filter.Overlaps(rel) {
				p.plan.clashes = append(p.plan.clashes, op{path: rel, ent: *t, kept: clash[t.Name]})
			}
			continue
		}
		if c != nil && t != nil && *c == *t {
			continue // the same entry on both sides: nothing to plan, no path to build
		}
		if err := p.entry(dir, c, t); err != nil {
			return err
		}
	}
	return nil
}

// entry plans one name present in the current tree (c), the target (t), or both.
func (p *planner) entry(dir string, c, t *objects.Entry) error {
	name := ""
	if c != nil {
		name = c.Name
	} else {
		name = t.Name
	}
	rel := path.Join(dir, name)
	// Outside the filter, a sweep removes temporaries the target lacks.
	if !p.filter.Overlaps(rel) && !(p.sweep && t == nil && inTemp(rel)) {
		return nil
	}
	switch {
	case t == nil:
		return p.remove(rel, *c, false)
	case c == nil:
		return p.create(rel, *t, true)
	case c.Kind != t.Kind:
		if err := p.remove(rel, *c, true); err != nil {
			return err
		}
		return p.create(rel, *t, false)
	case c.Kind == objects.KindDir:
		if err := p.dir(rel, c.ID, t.ID); err != nil {
			return err
		}
		if c.Mode != t.Mode && p.filter.Covers(rel) {
			opens := t.Mode&^c.Mode&0o300 != 0
			p.plan.dirModes = append(p.plan.dirModes, op{kind: opDirMode, path: rel, ent: *t, opens: opens})
		}
	case c.ID != t.ID && t.Kind == objects.KindSymlink:
		p.plan.writes = append(p.plan.writes, op{kind: opLink, path: rel, ent: *t})
	case c.ID != t.ID:
		p.plan.writes = append(p.plan.writes, op{kind: opWrite, path: rel, ent: *t})
	case c.Mode != t.Mode && t.Kind == objects.KindFile:
		p.plan.writes = append(p.plan.writes, op{kind: opChmod, path: rel, ent: *t})
	}
	return nil
}

// remove plans the removal of a captured entry; a directory's contents go
// first and the directory itself only when the filter covers it.
func (p *planner) remove(rel string, c objects.Entry, replaced bool) error {
	if p.writesOnly {
		return nil
	}
	kind := opRemove
	if c.Kind == objects.KindDir {
		kind = opRemoveDir
		if err := p.dir(rel, c.ID, objects.ID{}); err != nil {
			return err
		}
	}
	if p.covers(rel) || replaced {
		swept := !replaced && !p.filter.Covers(rel) // covered as a temporary only
		p.plan.removes = append(p.plan.removes, op{kind: kind, path: rel, ent: c, replaced: replaced, swept: swept})
	}
	return nil
}

// create plans the creation of a target entry and, for a directory, its contents.
func (p *planner) create(rel string, t objects.Entry, fresh bool) error {
	switch t.Kind {
	case objects.KindDir:
		p.plan.mkdirs = append(p.plan.mkdirs, op{kind: opMkdir, path: rel, ent: t, fresh: fresh})
		if err := p.dir(rel, objects.ID{}, t.ID); err != nil {
			return err
		}
		p.plan.dirModes = append(p.plan.dirModes, op{kind: opDirMode, path: rel, ent: t})
	case objects.KindSymlink:
		p.plan.writes = append(p.plan.writes, op{kind: opLink, path: rel, ent: t, fresh: fresh})
	default:
		p.plan.writes = append(p.plan.writes, op{kind: opWrite, path: rel, ent: t, fresh: fresh})
	}
	return nil
}

// UnsavedPaths returns the paths of the leaves (files, symlinks) of tree
// cur that no baseline tree holds identically (kind, content and mode):
// what a restore would lose for good if it replaced or removed them without
// a backup. Against one baseline they are the leaves the plan from it to
// cur writes; against several, the paths every such plan writes.
func UnsavedPaths(ctx context.Context, src diffview.TreeSource, baselines []objects.ID, cur objects.ID) (map[string]bool, error) {
	if len(baselines) == 0 {
		baselines = []objects.ID{{}} // nothing saved: every leaf is unsaved
	}
	var unsaved map[string]bool
	for i, base := range baselines {
		p := &planner{ctx: ctx, src: src, writesOnly: true}
		if err := p.dir("", base, cur); err != nil {
			return nil, err
		}
		now := make(map[string]bool, len(p.plan.writes))
		for _, o := range p.plan.writes {
			if i == 0 || unsaved[o.path] {
				now[o.path] = true
			}
		}
		unsaved = now
	}
	return unsaved, nil
}
