package engine

import (
	"errors"
	"fmt"

	"github.com/ckpt/ckpt/diffview"
	"github.com/ckpt/ckpt/objects"
)

// parsePathFilter validates workspace-relative paths given by a caller: "."
// (or no path at all) means the whole workspace; an empty path is refused,
// so a path lost on its way (an unset variable, a name a decoder dropped)
// never widens a restore to everything.
func parsePathFilter(paths []string) (diffview.PathFilter, error) {
	for _, p := range paths {
		if p == "" {
			return nil, fmt.Errorf("%w: an empty path; give paths relative to the workspace (\".\" for all of it)", ErrBadRequest)
		}
	}
	f, err := diffview.NewPathFilter(paths)
	if err != nil {
		return nil, fmt.Errorf("%w: %w: give paths relative to the workspace, inside it", ErrBadRequest, err)
	}
	return f, nil
}

// requireMatches fails with ErrBadRequest naming the first path of filter
// that is in none of the trees rooted at roots (read through src; a zero
// root is the empty tree), which where names for the message: an
// operation limited to a path that names nothing would otherwise succeed
// without doing anything.
func requireMatches(src diffview.TreeSource, filter diffview.PathFilter, where string, roots ...objects.ID) error {
	for _, p := range filter {
		found, err := inAnyTree(src, p, roots)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("%w: no file or directory %q in %s", ErrBadRequest, p, where)
		}
	}
	return nil
}

// inAnyTree reports whether rel names an entry in one of the trees.
func inAnyTree(src diffview.TreeSource, rel string, roots []objects.ID) (bool, error) {
	for _, root := range roots {
		_, err := findEntry(src, root, rel)
		switch {
		case err == nil:
			return true, nil
		case !errors.Is(err, ErrBadRequest):
			return false, err
		}
	}
	return false, nil
}
