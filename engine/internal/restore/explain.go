package restore

import (
	"path"

	"github.com/ckpt/ckpt/internal/watch"
)

// Explains reports whether events, a watcher's record in order of the
// workspace while Apply carried out p with no conflict, are Apply's own and
// nothing else's, given that each directory Apply told MadeDir of was
// watched (watch.Audit.Watch) and found empty then, so that nothing made
// in one escaped the record. Then nothing but Apply changed a path p
// touches, nor any other path, while it ran: the workspace holds p's
// target if it held p's source before.
//
// Apply's own events, each once and none missing, are these: a file or
// symlink written shows as events of its temporary sibling and that
// sibling's one rename onto its path; a mode changed as one attribute
// change; a file removed as one removal; a directory removed as one
// removal in its parent (so it went: a directory left holding what the
// plan did not capture raises none) and at most one on its own watch; a
// directory made as its creation, or as the creation of its temporary (a
// fresh subtree's) and that temporary's one rename onto its path; inside
// a fresh subtree before its rename, a directory or file made there as
// its creation, and a file's content and mode as writes and attribute
// changes after it; a directory's mode set as one attribute change in its
// parent and at most one on its own watch. Every other event names a
// temporary file of this process. A plan that both removes and creates a
// path (one that changes kind) is never explained.
func (p *Plan) Explains(events []watch.Event) bool {
	x := explainer{want: map[string]opKind{}, modes: map[string]bool{}, seen: map[string]bool{}, self: map[selfEvent]bool{},
		renamed: map[uint32]tempMove{}, subtrees: subtreesPlaced(events)}
	for _, list := range [][]op{p.removes, p.mkdirs, p.writes} {
		for _, o := range list {
			if _, twice := x.want[o.path]; twice {
				return false
			}
			x.want[o.path] = o.kind
		}
	}
	for _, o := range p.dirModes {
		x.modes[o.path] = false
	}
	for _, e := range events {
		if !x.event(e) {
			return false
		}
	}
	for _, seen := range x.modes {
		if !seen {
			return false
		}
	}
	return len(x.seen) == len(x.want) && len(x.renamed) == 0
}

// explainer matches events to a plan's operations (see Plan.Explains).
type explainer struct {
	want  map[string]opKind  // the removals, directories and writes, by path
	modes map[string]bool    // the directories whose mode is set: whether their change in the parent came
	seen  map[string]bool    // the paths of want whose event came
	self  map[selfEvent]bool // the events directories' own watches reported about them
	// renamed holds, by cookie, the directory of a temporary renamed away
	// and whether it is a directory, until its rename's other half.
	renamed map[uint32]tempMove
	// subtrees maps the temporary path of each fresh subtree renamed into
	// place to the path it was renamed to.
	subtrees map[string]string
}

// selfEvent is an event a directory's own watch reports about it.
type selfEvent struct {
	dir string
	op  watch.Op
}

// tempMove is a temporary renamed away: its directory, and whether it is
// a directory itself.
type tempMove struct {
	dir   string
	isDir bool
}

// subtreesPlaced maps the path of each temporary directory of this
// process renamed within the workspace to the path it was renamed to.
func subtreesPlaced(events []watch.Event) map[string]string {
	from := map[uint32]string{}
	placed := map[string]string{}
	for _, e := range events {
		switch {
		case !e.IsDir:
		case e.Op == watch.OpMovedFrom && ownTemp(e.Name):
			from[e.Cookie] = e.Path()
		case e.Op == watch.OpMovedTo:
			if tmp, ok := from[e.Cookie]; ok {
				placed[tmp] = e.Path()
				delete(from, e.Cookie)
			}
		}
	}
	return placed
}

// event reports whether e is one of the plan's own events, and notes it.
func (x *explainer) event(e watch.Event) bool {
	dir, inside, ok := x.placedAt(e.Dir)
	switch {
	case !ok:
		return false
	case e.Name == "":
		return x.selfEvent(dir, e.Op)
	case ownTemp(e.Name):
		if inside {
			return false // nothing in a fresh subtree has a temporary name
		}
		if e.Op == watch.OpMovedFrom {
			x.renamed[e.Cookie] = tempMove{dir: dir, isDir: e.IsDir}
		}
		return true
	case inside:
		return x.madeInside(path.Join(dir, e.Name), e)
	}
	return x.madeAt(dir, e)
}

// placedAt returns where directory dir is once the fresh subtree holding
// it, if any, is renamed into place; inside is set for a directory in a
// subtree, and ok is false for one in a temporary directory that no
// rename placed.
func (x *explainer) placedAt(dir string) (at string, inside, ok bool) {
	for d := dir; ; d = path.Dir(d) {
		if to, found := x.subtrees[d]; found {
			return to + dir[len(d):], true, true
		}
		if d == "." || d == "" || d == "/" {
			break
		}
	}
	return dir, false, !inTemp(dir)
}

// selfEvent takes an event a directory's own watch reported about it:
// the removal of a directory the plan removes, or the mode change of one
// whose mode it sets, each once at most (the directory may have had no
// watch).
func (x *explainer) selfEvent(dir string, op watch.Op) bool {
	k := selfEvent{dir, op}
	kind, planned := x.want[dir]
	_, mode := x.modes[dir]
	switch {
	case x.self[k]:
		return false
	case op == watch.OpRemoved && planned && kind == opRemoveDir, op == watch.OpAttrib && mode:
		x.self[k] = true
		return true
	}
	return false
}

// madeInside takes an event of a fresh subtree before its rename: the
// creation of a directory or file the plan makes there, once, and the
// writes and mode change of a file after its creation.
func (x *explainer) madeInside(rel string, e watch.Event) bool {
	kind, planned := x.want[rel]
	switch {
	case !planned || (kind == opMkdir) != e.IsDir:
		return false
	case e.Op == watch.OpCreated:
		if x.seen[rel] || kind != opMkdir && kind != opWrite && kind != opLink {
			return false
		}
		x.seen[rel] = true
		return true
	case e.Op == watch.OpWritten, e.Op == watch.OpAttrib:
		return kind == opWrite && x.seen[rel]
	}
	return false
}

// madeAt takes an event of entry e.Name of directory dir: the one event
// of the plan's operation there, or the change of a directory's mode.
func (x *explainer) madeAt(dir string, e watch.Event) bool {
	rel := path.Join(dir, e.Name)
	if seen, mode := x.modes[rel]; mode && e.IsDir && e.Op == watch.OpAttrib {
		x.modes[rel] = true
		return !seen
	}
	kind, planned := x.want[rel]
	if !planned || x.seen[rel] || e.IsDir != (kind == opMkdir || kind == opRemoveDir) {
		return false
	}
	switch kind {
	case opWrite, opLink, opMkdir:
		ok := kind == opMkdir && e.Op == watch.OpCreated
		if t, renamed := x.renamed[e.Cookie]; !ok && e.Op == watch.OpMovedTo && renamed && t.dir == dir && t.isDir == e.IsDir {
			delete(x.renamed, e.Cookie)
			ok = true
		}
		if !ok {
			return false
		}
	case opChmod:
		if e.Op != watch.OpAttrib {
			return false
		}
	case opRemove, opRemoveDir:
		if e.Op != watch.OpRemoved {
			return false
		}
	default:
		return false
	}
	x.seen[rel] = true
	return true
}
