package watch

import (
	"path/filepath"
	"slices"
	"strings"
)

// changeKind is what a whole-tree watch (Windows's one handle, one FSEvents
// stream) reports about a path.
type changeKind uint8

const (
	changeModified    changeKind = iota // content or attributes
	changeAdded                         // created, or renamed to this name
	changeRemoved                       // deleted
	changeRenamedAway                   // renamed from this name
)

// markResult is what marking one change did.
type markResult uint8

const (
	marked      markResult = iota
	markedAll              // a rule file changed: All
	staleName              // the name may be stale (see staleNames)
	overPending            // Options.MaxPending exceeded: handle as an overflow
)

// subtreeMarks turns the changes of a watch that covers the whole tree
// into marks on the directories the caller reads. Watch only records
// which directories those are, so a change is mapped to the nearest of
// them: a change in an ignored tree dirties the directory that holds it,
// not one entry per directory below. The backend guards it with its lock.
type subtreeMarks struct {
	root  string
	opts  Options
	rules []string // folded root-relative paths of the rule files inside the root
	tree  *dirNode
	// staleNames is set where the watch may name a change by a
	// directory's former path (see stale); gone then holds the folded
	// paths of entries removed (false) or renamed away (true), and
	// renamedFrom the folded old name of the latest rename.
	staleNames  bool
	gone        map[string]bool
	renamedFrom string
	// adrift, where staleNames is set, holds the directories added to the
	// tree (made, moved in, renamed to), by folded path: the watch may
	// name nothing at all that changes in them (see stale), so every
	// interval rescans them (rescanAdrift).
	adrift map[string]string
}

func newSubtreeMarks(root string, opts Options, staleNames bool) subtreeMarks {
	s := subtreeMarks{root: root, opts: opts, staleNames: staleNames, gone: map[string]bool{}, adrift: map[string]string{}}
	for _, f := range opts.RuleFiles {
		if rel, err := filepath.Rel(root, f); err == nil && filepath.IsLocal(rel) {
			s.rules = append(s.rules, foldName(filepath.ToSlash(rel)))
		}
	}
	s.reset()
	return s
}

// reset forgets which directories the caller read: after an All, its
// walk tells again. The paths of gone directories stay: a watch that
// names changes by stale paths keeps doing so.
func (s *subtreeMarks) reset() { s.tree = &dirNode{} }

// rescanAdrift marks every directory adrift that is still one for a
// Rescan in p, and forgets the others.
func (s *subtreeMarks) rescanAdrift(p *pending) {
	if len(s.adrift) > maxGone {
		p.markAll(ReasonDropped)
		return
	}
	for f, rel := range s.adrift {
		if !isDirNow(filepath.Join(s.root, filepath.FromSlash(rel))) {
			delete(s.adrift, f)
			continue
		}
		p.markRescan(rel, ReasonDropped)
	}
}

// watch records that the caller reads directory rel.
func (s *subtreeMarks) watch(rel string) { s.tree.lookup(rel, true).wd = 1 }

// mark applies one change of root-relative, slash-separated rel to p.
//
// The entry's directory is dirty, or, when the caller never read that
// directory (an ignored tree, or one new since the last walk), the nearest
// directory above it that it read. A name added that is a directory now
// is a Rescan: the directory may arrive with contents (moved in, or
// renamed within the tree), and a directory of the same name may have
// stood there before. A name removed or renamed away takes the records of
// what the caller read below it along.
func (s *subtreeMarks) mark(p *pending, kind changeKind, rel string) markResult {
	// Stale names are recorded even while All is pending: the watch may
	// name later changes by a path removed or renamed away now.
	stale := s.staleNames && s.stale(kind, rel)
	switch {
	case p.all:
		// The caller walks everything and tells again what it reads.
		return marked
	case stale:
		return staleName
	}
	if s.ruleFile(rel) {
		p.markAll(ReasonRuleFile)
		return markedAll
	}
	dir := parentRel(rel)
	name := strings.TrimPrefix(rel[len(dir):], "/")
	n, exact := s.tree.nearestWatched(dir)
	p.markDirty(n.rel())
	if exact {
		if slices.ContainsFunc(s.opts.RuleNames, func(r string) bool { return foldName(r) == foldName(name) }) {
			p.markRescan(n.rel(), ReasonRuleFile)
		}
		child := n.children[foldName(name)]
		switch kind {
		case changeAdded:
			if isDirNow(filepath.Join(s.root, filepath.FromSlash(rel))) {
				p.markRescan(joinRel(n.rel(), name), ReasonNewDir)
			}
		}
		if child != nil && kind != changeModified {
			forget(child)
		}
	}
	if m := s.opts.MaxPending; m > 0 && p.size() > m {
		return overPending
	}
	return marked
}

// forget drops what the caller read at and below n: those paths now name
// something else, or nothing.
func forget(n *dirNode) {
	n.each(func(m *dirNode) { m.wd = 0 })
	n.children = nil
	n.prune()
}

// ruleFile reports whether rel is one of the rule files inside the root
// or a directory on the way to one.
func (s *subtreeMarks) ruleFile(rel string) bool {
	f := foldName(rel)
	for _, r := range s.rules {
		if r == f || strings.HasPrefix(r, f+"/") {
			return true
		}
	}
	return false
}

// maxGone bounds the paths of gone entries, and of directories adrift,
// kept; beyond them every change is taken for stale, and every interval
// walks everything.
const maxGone = 1 << 12

// stale records the names of entries removed or renamed away and reports
// whether rel may be a stale name: a path below such an entry, or the
// entry's own path, where that may still name it. Windows and FSEvents
// name a change by the path its entry has when the change is made, and
// staleNames is off there. Wine's subtree watch keeps its own record of
// each directory's path, set when it first sees the directory (when some
// program opens it, not only when the caller reads it) and kept when the
// directory is renamed, or moved out of the tree and back (a move across
// the root's edge is reported as a removal or an addition), so it keeps
// reporting such a directory's changes under the old path for as long as
// the directory lives, and a new directory there reports under the same
// path. A directory made inside such a directory, or moved in, Wine
// watches at the path it records for it, which may no longer exist: it
// then reports nothing of what changes there, which is why every
// directory added is kept adrift. Which removed names were directories
// is not known, so every one is recorded; a name renamed to a file, and a
// removed name taken by a new entry, are settled. Every other change
// named at or below a recorded path makes everything dirty.
func (s *subtreeMarks) stale(kind changeKind, rel string) bool {
	f := foldName(rel)
	from := s.renamedFrom
	s.renamedFrom = ""
	if len(s.gone) > maxGone {
		return true
	}
	for p := parentRel(f); f != ""; p = parentRel(p) {
		if _, ok := s.gone[p]; ok {
			return true
		}
		if p == "" {
			break
		}
	}
	renamed, ok := s.gone[f]
	switch kind {
	case changeRemoved:
		s.gone[f] = renamed
	case changeRenamedAway:
		s.gone[f] = true
		s.renamedFrom = f
	case changeAdded:
		switch dir := isDirNow(filepath.Join(s.root, filepath.FromSlash(rel))); {
		case dir:
			s.adrift[f] = rel
		case from != "":
			s.gone[from] = false // a file renamed: nothing can be named below it
		}
		if !ok {
			return false
		}
		if renamed {
			return true
		}
		delete(s.gone, f)
	case changeModified:
		return ok
	}
	return false
}
