package watch

import (
	"path/filepath"
	"strings"

	"golang.org/x/sys/windows"
)

// eventLocked applies one change record: the action and the
// root-relative, slash-separated name it reports. It returns false when
// the record made everything dirty, which makes the rest of the read moot
// (not where the watch names changes by stale paths: the rest may remove
// or rename names that later changes are named by, see subtreeMarks.stale).
func (b *rdcw) eventLocked(action uint32, rel string) bool {
	if strings.Contains(rel, "~") {
		var ok bool
		if rel, ok = b.longRel(rel); !ok {
			return true
		}
	}
	switch b.mu.marks.mark(&b.mu.p, changeOf(action), rel) {
	case staleName:
		b.mu.p.markAll(ReasonDropped)
		b.mu.marks.reset()
	case overPending:
		b.overflowLocked()
	default:
		return true
	}
	return b.mu.marks.staleNames
}

// changeOf maps a FILE_ACTION_* to a changeKind.
func changeOf(action uint32) changeKind {
	switch action {
	case windows.FILE_ACTION_ADDED, windows.FILE_ACTION_RENAMED_NEW_NAME:
		return changeAdded
	case windows.FILE_ACTION_REMOVED:
		return changeRemoved
	case windows.FILE_ACTION_RENAMED_OLD_NAME:
		return changeRenamedAway
	}
	return changeModified
}

// isDirNow reports whether path is a directory now (not a link to one).
func isDirNow(path string) bool {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return false
	}
	a, err := windows.GetFileAttributes(p)
	return err == nil && a&windows.FILE_ATTRIBUTE_DIRECTORY != 0 && a&windows.FILE_ATTRIBUTE_REPARSE_POINT == 0
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
