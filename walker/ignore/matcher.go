package ignore

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"
)

// GitDir is the name excluded at every depth, whether a directory (a
// repository) or a file (a submodule or worktree link).
const GitDir = ".git"

// errNotRegular is returned by the Matcher's file reader for pattern files
// that exist but are not regular files (symlinks included).
var errNotRegular = errors.New("not a regular file")

// Matcher answers "is this path ignored?" for a workspace on disk, with the
// same rules the walker applies: a path is ignored when any of its
// components is named .git, when an ancestor directory is ignored (git never
// re-includes below an excluded directory), or when the deciding pattern
// excludes it. Per-directory pattern files (.gitignore, .ckptignore,
// .gitattributes) are read lazily, once, the first time a path below that
// directory is asked about; later edits to them are not seen, so make a
// new Matcher per operation. A Matcher is safe for concurrent use.
type Matcher struct {
	root *os.Root

	mu    sync.Mutex
	rules map[string]*Rules // by directory, "" for the root
}

// NewMatcher returns a Matcher for the workspace at root; global holds the
// patterns that apply from the root down (profile, info/exclude, caller
// extras, forced exclusions), merged with the root's own pattern files.
// The Matcher keeps root open until Close.
func NewMatcher(root string, global Set) (*Matcher, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	m := &Matcher{root: r, rules: make(map[string]*Rules)}
	set := m.load(".")
	for l := range set {
		set[l] = append(append([]Pattern(nil), global[l]...), set[l]...)
	}
	m.rules[""] = (*Rules)(nil).Child("", set)
	return m, nil
}

// Close releases the workspace root handle.
func (m *Matcher) Close() error { return m.root.Close() }

// Ignored reports whether path (slash-separated, relative to the root; "."
// or "" is the root, never ignored) is excluded from checkpoints; isDir says
// whether path names a directory (a symlink to a directory is not one).
func (m *Matcher) Ignored(p string, isDir bool) bool {
	p = path.Clean(strings.TrimPrefix(p, "/"))
	if p == "." {
		return false
	}
	comps := strings.Split(p, "/")
	dir := ""
	for i, c := range comps {
		if c == GitDir {
			return true
		}
		full := join(dir, c)
		last := i == len(comps)-1
		if m.rulesFor(dir).Ignored(full, isDir || !last) {
			return true
		}
		dir = full
	}
	return false
}

// rulesFor returns the rules in effect in dir, whose ancestors are known
// not to be ignored.
func (m *Matcher) rulesFor(dir string) *Rules {
	m.mu.Lock()
	r, ok := m.rules[dir]
	m.mu.Unlock()
	if ok {
		return r
	}
	parent := m.rulesFor(parentDir(dir))
	r = parent.Child(dir, m.load(dir))
	m.mu.Lock()
	m.rules[dir] = r
	m.mu.Unlock()
	return r
}

// load reads the pattern files of one directory, never following symlinks.
func (m *Matcher) load(dir string) Set {
	return LoadDir(func(name string) ([]byte, error) {
		name = path.Join(dir, name)
		fi, err := m.root.Lstat(name)
		if err != nil {
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			return nil, &fs.PathError{Op: "read", Path: name, Err: errNotRegular}
		}
		return m.root.ReadFile(name)
	})
}
