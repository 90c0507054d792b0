package diffview

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// ErrBadFilter reports a path filter that is absolute or leaves the tree.
var ErrBadFilter = errors.New("diffview: bad path filter")

// filterSet is a normalised list of path filters. A path is covered when it
// equals a filter or lies under a filter directory; an empty set covers
// every path.
type filterSet []string

// newFilterSet cleans the filters: "./a//b/" becomes "a/b", and "." or ""
// (the root) make the set match everything. Absolute paths and paths that
// climb out of the root ("../x") yield ErrBadFilter.
func newFilterSet(filters []string) (filterSet, error) {
	var fs filterSet
	for _, f := range filters {
		c := path.Clean(f)
		if c == "." {
			return nil, nil
		}
		if path.IsAbs(c) || c == ".." || strings.HasPrefix(c, "../") {
			return nil, fmt.Errorf("%w: %q", ErrBadFilter, f)
		}
		fs = append(fs, c)
	}
	return fs, nil
}

// covers reports whether p is kept by the filters.
func (fs filterSet) covers(p string) bool {
	if len(fs) == 0 {
		return true
	}
	for _, f := range fs {
		if p == f || (strings.HasPrefix(p, f) && p[len(f)] == '/') {
			return true
		}
	}
	return false
}

// overlaps reports whether anything under directory p can be kept: p is
// covered or is an ancestor of a filter.
func (fs filterSet) overlaps(p string) bool {
	if fs.covers(p) {
		return true
	}
	for _, f := range fs {
		if strings.HasPrefix(f, p) && f[len(p)] == '/' {
			return true
		}
	}
	return false
}
