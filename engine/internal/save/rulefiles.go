package save

import (
	"os"
	"path/filepath"
	"time"
)

// ruleFiles re-checks, at every scan, the ignore-rule files that live
// outside the captured directories (the workspace repository's
// .git/info/exclude) and the directories that lead to them. The watcher
// watches them too, but the walker reads such a file through a symlink,
// and a write to the link's target raises no event where the watcher
// looks; a few stats per save close that gap.
type ruleFiles struct {
	paths []string      // each rule file and its ancestors below the workspace
	last  []os.FileInfo // their lstat and stat at the previous check; nil: missing
	racy  bool          // a file was changed too recently to trust its stamp
}

// newRuleFiles checks the rule files at the given paths below workspace.
func newRuleFiles(workspace string, files []string) *ruleFiles {
	r := &ruleFiles{}
	for _, f := range files {
		for p := f; len(p) > len(workspace); p = filepath.Dir(p) {
			r.paths = append(r.paths, p)
		}
	}
	return r
}

// changed lstats every path and reports whether any of them may have
// changed since the previous call (the first call reports true).
func (r *ruleFiles) changed(now time.Time) bool {
	// A symlinked rule file is read through its link, so the target's
	// stamp counts as well as the link's.
	cur := make([]os.FileInfo, 2*len(r.paths))
	for i, p := range r.paths {
		if fi, err := os.Lstat(p); err == nil {
			cur[2*i] = fi
		}
		if fi, err := os.Stat(p); err == nil {
			cur[2*i+1] = fi
		}
	}
	changed := r.last == nil || r.racy
	r.racy = false
	for i, fi := range cur {
		if !changed && !sameStamp(r.last[i], fi) {
			changed = true
		}
		// A rewrite of the same size within one timestamp tick keeps the stamp.
		if fi != nil && racy(fi.ModTime().UnixNano(), now.UnixNano()) {
			r.racy = true
		}
	}
	r.last = cur
	return changed
}

func sameStamp(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.Size() == b.Size() && a.Mode() == b.Mode() && a.ModTime().Equal(b.ModTime())
}
