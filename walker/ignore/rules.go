package ignore

import "strings"

// Layer is a source of patterns. Layers are ordered by precedence: when
// deciding a path, every layer from the highest down is consulted, and the
// first pattern that matches (searching each file from its last line up,
// deeper directories before shallower ones) decides.
type Layer uint8

// The layers, lowest precedence first.
const (
	// LayerProfile is the built-in exclusion profile.
	LayerProfile Layer = iota
	// LayerLFS holds the patterns of filter=lfs lines of .gitattributes
	// files, as Cline appends them to its exclusion list.
	LayerLFS
	// LayerInfoExclude is the workspace repository's .git/info/exclude.
	LayerInfoExclude
	// LayerGitignore holds .gitignore files.
	LayerGitignore
	// LayerCkptignore holds .ckptignore files (gitignore syntax).
	LayerCkptignore
	// LayerExtra holds patterns given by the caller.
	LayerExtra
	// LayerForced holds exclusions no other pattern may undo (the store).
	LayerForced

	// NumLayers is the number of layers.
	NumLayers
)

// Per-directory file names read by LoadDir.
const (
	GitignoreFile  = ".gitignore"
	CkptignoreFile = ".ckptignore"
	AttributesFile = ".gitattributes"
)

// IsPatternFile reports whether name is one of the files LoadDir reads.
func IsPatternFile(name string) bool {
	return name == GitignoreFile || name == CkptignoreFile || name == AttributesFile
}

// Set holds the patterns of each layer read in one directory.
type Set [NumLayers][]Pattern

// Empty reports whether no layer holds a pattern.
func (s *Set) Empty() bool {
	for _, l := range s {
		if len(l) > 0 {
			return false
		}
	}
	return true
}

// LoadDir reads the per-directory pattern files of one directory through
// read, which returns the content of the named file in that directory, or
// an error when it is absent or not a regular file (callers should not
// follow symlinks: git does not for .gitignore). Absent files contribute
// nothing; LoadDir never fails.
func LoadDir(read func(name string) ([]byte, error)) Set {
	var s Set
	if data, err := read(GitignoreFile); err == nil {
		s[LayerGitignore] = ParseLines(data)
	}
	if data, err := read(CkptignoreFile); err == nil {
		s[LayerCkptignore] = ParseLines(data)
	}
	if data, err := read(AttributesFile); err == nil {
		s[LayerLFS] = ParseLFSAttributes(data)
	}
	return s
}

// Rules is the immutable set of patterns in effect inside one directory:
// the patterns read in that directory plus, through its parent, those of
// every ancestor up to the root. Rules values are safe for concurrent use;
// a nil *Rules holds no patterns.
type Rules struct {
	parent *Rules
	base   string // slash-separated directory of the patterns, "" for the root
	lists  [NumLayers]*patternList
}

// Child returns the rules in effect in directory base (slash-separated,
// relative to the root, "" for the root itself), which lies directly or
// indirectly below r's directory, given the patterns read there. When set
// is empty, r itself is returned.
func (r *Rules) Child(base string, set Set) *Rules {
	if set.Empty() {
		return r
	}
	c := &Rules{parent: r, base: base}
	for layer, pats := range set {
		c.lists[layer] = newPatternList(pats)
	}
	return c
}

// Decision is the outcome of matching one path.
type Decision uint8

// Decisions.
const (
	// NoMatch: no pattern matched; the path is included.
	NoMatch Decision = iota
	// Excluded: the deciding pattern excludes the path.
	Excluded
	// Included: the deciding pattern is a negation that re-includes it.
	Included
)

// Match decides path (slash-separated, relative to the root, inside the
// directory r belongs to) by itself, without looking at its ancestors: the
// caller must not ask about paths whose parent directory is excluded, as git
// never re-includes below an excluded directory.
func (r *Rules) Match(path string, isDir bool) Decision {
	for layer := NumLayers - 1; ; layer-- {
		for f := r; f != nil; f = f.parent {
			l := f.lists[layer]
			if l == nil {
				continue
			}
			rel := path
			if f.base != "" {
				rel = path[len(f.base)+1:]
			}
			if i := l.last(rel, isDir); i >= 0 {
				if l.pats[i].negate {
					return Included
				}
				return Excluded
			}
		}
		if layer == 0 {
			return NoMatch
		}
	}
}

// Ignored reports whether Match excludes path.
func (r *Rules) Ignored(path string, isDir bool) bool {
	return r.Match(path, isDir) == Excluded
}

// join joins a directory path relative to the root and a name.
func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// parentDir returns the directory part of a slash-separated relative path
// ("" at the top level).
func parentDir(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[:i]
	}
	return ""
}
