package restore

import (
	"github.com/ckpt/ckpt/internal/watch"
)

// Explains reports whether events, a watcher's record in order of the
// workspace while Apply carried out p with no conflict, are Apply's own and
// nothing else's: a file or symlink written shows as events of its
// temporary sibling and that sibling's one rename onto its path, a mode
// changed as one attribute change, a file removed as one removal, and every
// other event names a temporary file of this process. Then nothing but
// Apply changed a path p touches, nor any other path, while it ran: the
// workspace holds p's target if it held p's source before. A plan that
// makes, removes or changes directories, or replaces a path with another
// kind of entry, is never explained: its directories' own events are not
// followed.
func (p *Plan) Explains(events []watch.Event) bool {
	if len(p.mkdirs) > 0 || len(p.dirModes) > 0 {
		return false
	}
	want := make(map[string]opKind, len(p.removes)+len(p.writes))
	for _, list := range [][]op{p.removes, p.writes} {
		for _, o := range list {
			if _, twice := want[o.path]; twice || o.kind == opRemoveDir {
				return false
			}
			want[o.path] = o.kind
		}
	}
	seen := make(map[string]bool, len(want))
	renamed := map[uint32]string{} // by cookie, the directory of a temporary file renamed away
	for _, e := range events {
		if e.IsDir || e.Name == "" {
			return false
		}
		if ownTemp(e.Name) {
			if e.Op == watch.OpMovedFrom {
				renamed[e.Cookie] = e.Dir
			}
			continue
		}
		rel := e.Path()
		kind, ok := want[rel]
		if !ok || seen[rel] {
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
		case opRemove:
			if e.Op != watch.OpRemoved {
				return false
			}
		}
		seen[rel] = true
	}
	return len(seen) == len(want) && len(renamed) == 0
}
