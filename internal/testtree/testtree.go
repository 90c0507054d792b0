// Package testtree builds directory trees from declarative descriptions and
// reads them back, so tests can state a workspace in one literal and compare
// trees by walking the file system itself (never through ckpt).
package testtree

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Node is one entry of a tree description: File, Symlink or Dir.
type Node interface{ isNode() }

// File is a regular file. Mode 0 means 0o644.
type File struct {
	Content string
	Mode    os.FileMode
}

// Symlink is a symbolic link with the given target text.
type Symlink struct{ Target string }

// Dir is a directory: names to nodes. Mode 0 means 0o755.
type Dir map[string]Node

func (File) isNode()    {}
func (Symlink) isNode() {}
func (Dir) isNode()     {}

// Write creates the nodes of d under root (which must exist).
func Write(root string, d Dir) error {
	names := make([]string, 0, len(d))
	for name := range d {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := filepath.Join(root, name)
		switch n := d[name].(type) {
		case File:
			mode := n.Mode
			if mode == 0 {
				mode = 0o644
			}
			if err := os.WriteFile(p, []byte(n.Content), mode); err != nil {
				return err
			}
			if err := os.Chmod(p, mode); err != nil {
				return err
			}
		case Symlink:
			if err := os.Symlink(n.Target, p); err != nil {
				return err
			}
		case Dir:
			if err := os.Mkdir(p, 0o755); err != nil {
				return err
			}
			if err := Write(p, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// Entry is what Read records of one path.
type Entry struct {
	Kind    string // "file", "symlink", "dir"
	Mode    fs.FileMode
	Content string // file content or symlink target
}

func (e Entry) String() string {
	c := e.Content
	if len(c) > 40 {
		c = fmt.Sprintf("%q…(%d bytes)", c[:40], len(c))
	} else {
		c = fmt.Sprintf("%q", c)
	}
	return fmt.Sprintf("%s %v %s", e.Kind, e.Mode, c)
}

// Read walks root without following symlinks and records every path except
// those for which skip returns true (skip may be nil). Paths are
// slash-separated and relative to root.
func Read(root string, skip func(rel string) bool) (map[string]Entry, error) {
	out := map[string]Entry{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if skip != nil && skip(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		e := Entry{Mode: fi.Mode()}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			e.Kind = "symlink"
			e.Mode = 0
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			e.Content = t
		case fi.IsDir():
			e.Kind = "dir"
		default:
			e.Kind = "file"
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			e.Content = string(b)
		}
		out[rel] = e
		return nil
	})
	return out, err
}

// Diff describes how two Read results differ, one line per path; "" when equal.
func Diff(want, got map[string]Entry) string {
	var lines []string
	for p, w := range want {
		g, ok := got[p]
		switch {
		case !ok:
			lines = append(lines, fmt.Sprintf("missing %s (want %v)", p, w))
		case g != w:
			lines = append(lines, fmt.Sprintf("differs %s: got %v, want %v", p, g, w))
		}
	}
	for p, g := range got {
		if _, ok := want[p]; !ok {
			lines = append(lines, fmt.Sprintf("extra %s (%v)", p, g))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// Under returns a skip function for Read that skips the given paths and everything below them.
func Under(paths ...string) func(string) bool {
	return func(rel string) bool {
		for _, p := range paths {
			if rel == p || strings.HasPrefix(rel, p+"/") {
				return true
			}
		}
		return false
	}
}
