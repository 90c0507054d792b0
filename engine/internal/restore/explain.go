package restore

import (
	"github.com/ckpt/ckpt/internal/watch"
)

// Explains reports whether events, a watcher's record in order of the
// workspace while Apply carried out p with no conflict, are Apply's own and
// nothing else's: a file or symlink written shows as events of its
// temporary sibling and that sibling's one rename onto its path, a mode
// changed as one attribute change, a file removed as one removal, a
// directory removed as one removal in its parent (so it went: a directory
// left holding what the plan did not capture raises none) and at most one
// on its own watch, and every other event names a temporary file of this
// process. Then nothing but Apply changed a path p touches, nor any other
// path, while it ran: the workspace holds p's target if it held p's source
// before. A plan that makes directories or changes their modes, or
// replaces a path with another kind of entry, is never explained.
func (p *Plan) Explains(events []watch.Event) bool {
	if len(p.mkdirs) > 0 || len(p.dirModes) > 0 {
		return false
	}
	want := make(map[string]opKind, len(p.removes)+len(p.writes))
	for _, list := range [][]op{p.removes, p.writes} {
		for _, o := range list {
			if _, twice := want[o.path]; twice {
				return false
			}
			want[o.path] = o.kind
		}
	}
	seen := make(map[string]bool, len(want))
	gone := map[string]bool{}      // directories whose removal their own watch reported
	renamed := map[uint32]string{} // by cookie, the directory of a temporary file renamed away
	for _, e := range events {
		if e.Name == "" {
			if kind, ok := want[e.Dir]; !ok || kind != opRemoveDir || e.Op != watch.OpRemoved || gone[e.Dir] {
				return false
			}
			gone[e.Dir] = true
			continue
		}
		if ownTemp(e.Name) && !e.IsDir {
			if e.Op == watch.OpMovedFrom {
				renamed[e.Cookie] = e.Dir
			}
			continue
		}
		rel := e.Path()
		kind, ok := want[rel]
		if !ok || seen[rel] || e.IsDir != (kind == opRemoveDir) {
			return false
		}
		switch kind {
		case opWrite, opLink:
			dir, ok := renamed[e.Cookie]
			if e.Op != watch.OpMovedTo || !ok || dir != e.Dir {
				return false
			}
			delete(renamed, e.Cookie)
		case opChmod:
			if e.Op != watch.OpAttrib {
				return false
			}
		case opRemove, opRemoveDir:
			if e.Op != watch.OpRemoved {
				return false
			}
		}
		seen[rel] = true
	}
	return len(seen) == len(want) && len(renamed) == 0
}
