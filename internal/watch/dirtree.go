package watch

import "strings"

// dirNode is one path component of a watched or unwatchable directory.
// Nodes exist only on the paths to such directories, so memory grows with
// the watches, not with the workspace. Children are keyed by foldName of
// their names, so on a case-insensitive file system an event that spells
// a path in another case finds the node of the directory it names.
type dirNode struct {
	name     string
	parent   *dirNode
	children map[string]*dirNode
	wd       int32 // the backend's watch of it (inotify: its descriptor); 0 when not watched
	failed   bool  // Watch could not add a watch for it
}

// rel returns the node's root-relative path.
func (n *dirNode) rel() string {
	if n.parent == nil {
		return ""
	}
	var parts []string
	for m := n; m.parent != nil; m = m.parent {
		parts = append(parts, m.name)
	}
	var b strings.Builder
	for i := len(parts) - 1; i >= 0; i-- {
		b.WriteString(parts[i])
		if i > 0 {
			b.WriteByte('/')
		}
	}
	return b.String()
}

// lookup returns the node of rel below n, creating the missing components
// when create is set; without create it returns nil for an unknown path.
func (n *dirNode) lookup(rel string, create bool) *dirNode {
	if rel == "" {
		return n
	}
	for name := range strings.SplitSeq(rel, "/") {
		c := n.children[foldName(name)]
		if c == nil {
			if !create {
				return nil
			}
			c = &dirNode{name: name, parent: n}
			if n.children == nil {
				n.children = map[string]*dirNode{}
			}
			n.children[foldName(name)] = c
		}
		n = c
	}
	return n
}

// nearestWatched returns the deepest watched node on the path rel below n
// (n itself when none below is), and whether that node is rel's own.
func (n *dirNode) nearestWatched(rel string) (*dirNode, bool) {
	best, at := n, n
	if rel == "" {
		return best, true
	}
	parts := strings.Split(rel, "/")
	for i, name := range parts {
		if at = at.children[foldName(name)]; at == nil {
			return best, false
		}
		if at.wd != 0 {
			best = at
			if i == len(parts)-1 {
				return best, true
			}
		}
	}
	return best, false
}

// each calls fn for n and every node below it.
func (n *dirNode) each(fn func(*dirNode)) {
	fn(n)
	for _, c := range n.children {
		c.each(fn)
	}
}

// prune detaches n and its empty ancestors from the tree when they hold
// neither a watch, a failure nor children. The root is never detached.
func (n *dirNode) prune() {
	for n.parent != nil && n.wd == 0 && !n.failed && len(n.children) == 0 {
		delete(n.parent.children, foldName(n.name))
		n = n.parent
	}
}
