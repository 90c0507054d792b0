package watch

import (
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/windows"
)

// eventLocked applies one change record: the action and the
// root-relative, slash-separated name it reports. It returns false when
// the record made everything dirty, which makes the rest of the read moot.
//
// The entry's directory is dirty, or, when the caller never read that
// directory (an ignored tree, or one new since the last walk), the nearest
// directory above it that it read. A name added or renamed in that is a
// directory is a Rescan: the directory may arrive with contents (moved
// in, or renamed within the tree), and a directory of the same name may
// have stood there before. A name removed or renamed away takes the
// records of what the caller read below it along.
func (b *rdcw) eventLocked(action uint32, rel string) bool {
	if strings.Contains(rel, "~") {
		var ok bool
		if rel, ok = b.longRel(rel); !ok {
			return true
		}
	}
	if b.staleLocked(action, rel) {
		b.mu.p.markAll(ReasonDropped)
		b.mu.reopen = true
		return false
	}
	if b.ruleFileLocked(rel) {
		b.mu.p.markAll(ReasonRuleFile)
		return true
	}
	dir, name := parentRel(rel), rel[len(parentRel(rel)):]
	name = strings.TrimPrefix(name, "/")
	n, exact := b.mu.tree.nearestWatched(dir)
	b.mu.p.markDirty(n.rel())
	if exact {
		if slices.ContainsFunc(b.opts.RuleNames, func(r string) bool { return foldName(r) == foldName(name) }) {
			b.mu.p.markRescan(n.rel(), ReasonRuleFile)
		}
		child := n.children[foldName(name)]
		switch action {
		case windows.FILE_ACTION_ADDED, windows.FILE_ACTION_RENAMED_NEW_NAME:
			if isDir(filepath.Join(b.root, filepath.FromSlash(rel))) {
				b.mu.p.markRescan(joinRel(n.rel(), name), ReasonNewDir)
			}
			if child != nil {
				forget(child)
			}
		case windows.FILE_ACTION_REMOVED, windows.FILE_ACTION_RENAMED_OLD_NAME:
			if child != nil && child.wd != 0 {
				b.mu.gone[foldName(joinRel(n.rel(), name))] = action == windows.FILE_ACTION_RENAMED_OLD_NAME
			}
			if child != nil {
				forget(child)
			}
		}
	}
	if m := b.opts.MaxPending; m > 0 && b.mu.p.size() > m {
		b.overflowLocked()
		return false
	}
	return true
}

// maxGone bounds the paths of gone directories kept; beyond it the
// handle is replaced (an All), which clears them.
const maxGone = 1 << 12

// staleLocked reports whether rel may be a stale name: a path below a
// directory the caller read that was removed or renamed away, or a new
// entry at the old name of one renamed away. Windows names a change by
// the path its entry has when the change is made, so such a directory
// never reports under its old path again, and only an entry created
// there later can. Wine's subtree watch keeps its own record of each
// directory's path, set when it first sees it and kept when the directory
// is renamed or moved out of the tree (which it reports as a removal), so
// it keeps reporting the directory's changes under the old path for as
// long as the handle lives. A change named so is ambiguous: the handle is
// replaced (Wine's records go with it) and everything is dirty. An entry
// created at the name of a removed directory is new; from then on the
// name is its.
func (b *rdcw) staleLocked(action uint32, rel string) bool {
	if len(b.mu.gone) == 0 {
		return false
	}
	if len(b.mu.gone) > maxGone {
		return true
	}
	f := foldName(rel)
	if renamed, ok := b.mu.gone[f]; ok {
		switch action {
		case windows.FILE_ACTION_ADDED, windows.FILE_ACTION_RENAMED_NEW_NAME:
			if renamed {
				return true
			}
			delete(b.mu.gone, f)
		case windows.FILE_ACTION_MODIFIED:
			return true
		}
	}
	for p := f; p != ""; {
		p = parentRel(p)
		if _, ok := b.mu.gone[p]; ok {
			return true
		}
	}
	return false
}

// isDir reports whether path is a directory now (not a link to one).
func isDir(path string) bool {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return false
	}
	a, err := windows.GetFileAttributes(p)
	return err == nil && a&windows.FILE_ATTRIBUTE_DIRECTORY != 0 && a&windows.FILE_ATTRIBUTE_REPARSE_POINT == 0
}

// forget drops what the caller read at and below n: those paths now name
// something else, or nothing.
func forget(n *dirNode) {
	n.each(func(m *dirNode) { m.wd = 0 })
	n.children = nil
	n.prune()
}

// ruleFileLocked reports whether rel is one of the rule files inside the
// root or a directory on the way to one.
func (b *rdcw) ruleFileLocked(rel string) bool {
	f := foldName(rel)
	for _, r := range b.rules {
		if r == f || strings.HasPrefix(r, f+"/") {
			return true
		}
	}
	return false
}

// longRel turns a name that may hold 8.3 short components (a program
// that opened a path by its short name is reported by it) into the long
// form the caller reads. A path that no longer resolves is replaced by its
// deepest ancestor that does, made a Rescan: what was removed below it is
// then found by walking it (a removed rule file among it). The second
// result is false when nothing is left to mark.
func (b *rdcw) longRel(rel string) (string, bool) {
	for p := rel; ; p = parentRel(p) {
		if long, ok := b.longPath(p); ok {
			if p == rel {
				return long, true
			}
			b.mu.p.markRescan(long, ReasonNewDir)
			return "", false
		}
		if p == "" {
			b.mu.p.markAll(ReasonRootLost)
			return "", false
		}
	}
}

// longPath returns the long form of root-relative rel, which must exist.
func (b *rdcw) longPath(rel string) (string, bool) {
	if !strings.Contains(rel, "~") {
		return rel, true
	}
	long, err := longName(filepath.Join(b.root, filepath.FromSlash(rel)))
	if err != nil {
		return "", false
	}
	r, err := filepath.Rel(b.longRoot, long)
	switch {
	case err != nil:
		return "", false
	case r == ".":
		return "", true
	case !filepath.IsLocal(r):
		return "", false
	}
	return filepath.ToSlash(r), true
}

// longName returns the long form of an existing path.
func longName(path string) (string, error) {
	p, err := windows.UTF16FromString(path)
	if err != nil {
		return "", err
	}
	buf := make([]uint16, windows.MAX_PATH)
	for {
		n, err := windows.GetLongPathName(&p[0], &buf[0], uint32(len(buf)))
		if err != nil {
			return "", err
		}
		if int(n) < len(buf) {
			return windows.UTF16ToString(buf[:n]), nil
		}
		buf = make([]uint16, n)
	}
}
