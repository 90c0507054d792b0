package diffview

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// ErrBadFilter reports a path filter that is absolute or leaves the tree.
var ErrBadFilter = errors.New("bad path filter")

// PathFilter is a normalised list of slash-separated relative paths. A path
// is covered when it equals a filter or lies under a filter directory; an
// empty filter covers every path.
type PathFilter []string

// NewPathFilter cleans the filters: "./a//b/" becomes "a/b", and "." or ""
// (the root) make the filter cover everything. Absolute paths and paths that
// climb out of the root ("../x") yield ErrBadFilter.
func NewPathFilter(filters []string) (PathFilter, error) {
	var fs PathFilter
	for _, f := range filters {
		c, err := CleanPath(f)
		if err != nil {
			return nil, err
		}
		if c == "" {
			return nil, nil
		}
		fs = append(fs, c)
	}
	return fs, nil
}

// CleanPath is the one rule for a slash-separated path relative to a
// tree's root: it returns the path cleaned ("./a//b/" is "a/b"), "" for the
// root itself ("", "."), and ErrBadFilter for an absolute path or one that
// climbs out of the root ("../x").
func CleanPath(p string) (string, error) {
	c := path.Clean(p)
	switch {
	case c == ".":
		return "", nil
	case path.IsAbs(c) || c == ".." || strings.HasPrefix(c, "../"):
		return "", fmt.Errorf("%w: %q", ErrBadFilter, p)
	}
	return c, nil
}

// Covers reports whether p is kept by the filter.
func (fs PathFilter) Covers(p string) bool {
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

// Overlaps reports whether anything under directory p can be kept: p is
// covered or is an ancestor of a filter (the root "" is everyone's).
func (fs PathFilter) Overlaps(p string) bool {
	if p == "" || fs.Covers(p) {
		return true
	}
	for _, f := range fs {
		if strings.HasPrefix(f, p) && f[len(p)] == '/' {
			return true
		}
	}
	return false
}
