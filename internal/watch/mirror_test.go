//go:build linux || windows || darwin

package watch

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// entry is what the differential test compares per path: everything a
// save records about it.
type entry struct {
	kind   byte // 'd', 'f', 'l'
	mode   fs.FileMode
	size   int64
	mtime  int64
	nlink  uint64
	digest [32]byte // file content or symlink target
}

// excluded returns the ignore rules of directory dir. The test's rules are
// a simplification of git's: node_modules is always ignored, and a
// directory's .gitignore lists names (one a line) excluded from that
// directory. A .gitignore that is a symlink holds no rules, as for git and
// the walker (which do not follow it): a write to its target changes
// nothing the watcher must report for the directory.
func excluded(root, dir string) []string {
	p := filepath.Join(root, filepath.FromSlash(dir), ".gitignore")
	var data []byte
	if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
		data, _ = os.ReadFile(p)
	}
	return append(strings.Split(string(data), "\n"), "node_modules")
}

// captured reports whether the entry name of directory dir is captured.
func captured(root, dir, name string) bool {
	return !slices.Contains(excluded(root, dir), name)
}

// statEntry lstats rel and hashes its content.
func statEntry(root, rel string) (entry, bool, error) {
	p := filepath.Join(root, filepath.FromSlash(rel))
	fi, err := os.Lstat(p)
	if os.IsNotExist(err) || isNotDir(err) {
		return entry{}, false, nil
	}
	if err != nil {
		return entry{}, false, err
	}
	e := entry{mode: fi.Mode(), size: fi.Size(), mtime: fi.ModTime().UnixNano(), nlink: linkCount(fi)}
	switch {
	case fi.IsDir():
		e.kind = 'd'
	case fi.Mode()&fs.ModeSymlink != 0:
		e.kind = 'l'
		t, err := os.Readlink(p)
		if err != nil {
			return entry{}, false, err
		}
		e.digest = sha256.Sum256([]byte(t))
	default:
		e.kind = 'f'
		data, err := os.ReadFile(p)
		if os.IsNotExist(err) {
			return entry{}, false, nil
		}
		if err != nil {
			return entry{}, false, err
		}
		e.digest = sha256.Sum256(data)
	}
	return e, true, nil
}

// mirror plays the engine: a listing of the captured tree kept up to date
// from Changes alone, calling Watch for every directory it reads.
type mirror struct {
	root  string
	w     *Watcher // nil for a cold listing
	list  map[string]entry
	reads int // directories read since the last reset of the counter
}

// listTree returns a cold full listing of root.
func listTree(root string) (map[string]entry, error) {
	m := &mirror{root: root, list: map[string]entry{}}
	err := m.readTree("")
	return m.list, err
}

// readTree lists rel and everything captured below it.
func (m *mirror) readTree(rel string) error {
	e, ok, err := statEntry(m.root, rel)
	if err != nil || !ok {
		return err
	}
	m.list[rel] = e
	if e.kind != 'd' {
		return nil
	}
	return m.readDir(rel, true)
}

// readDir reads the entries of directory rel into the listing, walking a
// subdirectory when recursive is set or when the listing does not know it.
func (m *mirror) readDir(rel string, recursive bool) error {
	if m.w != nil {
		m.w.Watch(rel)
	}
	m.reads++
	des, err := os.ReadDir(filepath.Join(m.root, filepath.FromSlash(rel)))
	if os.IsNotExist(err) || isNotDir(err) {
		return nil
	}
	if err != nil {
		return err
	}
	rules := excluded(m.root, rel)
	for _, de := range des {
		if slices.Contains(rules, de.Name()) {
			continue
		}
		child := joinRel(rel, de.Name())
		old, known := m.list[child]
		e, ok, err := statEntry(m.root, child)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if known && old.kind == 'd' && e.kind != 'd' {
			m.forget(child) // a directory replaced by a file or link
		}
		m.list[child] = e
		if e.kind == 'd' && (recursive || !known || old.kind != 'd') {
			if err := m.readDir(child, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// forget removes rel and everything below it from the listing.
func (m *mirror) forget(rel string) {
	for k := range m.list {
		if k == rel || rel == "" || strings.HasPrefix(k, rel+"/") {
			delete(m.list, k)
		}
	}
}

// apply brings the listing up to date from c, reading only what c names.
func (m *mirror) apply(c Changes) error {
	if c.All {
		m.list = map[string]entry{}
		return m.readTree("")
	}
	for _, d := range c.Dirty {
		refresh := m.refreshDir
		if names, ok := c.Entries[d]; ok {
			refresh = func(d string) error { return m.refreshEntries(d, names) }
		}
		if err := refresh(d); err != nil {
			return err
		}
	}
	for _, r := range c.Rescan {
		m.forget(r)
		if r != "" {
			parent := parentRel(r)
			if p, ok := m.list[parent]; !ok || p.kind != 'd' || !captured(m.root, parent, filepath.Base(r)) {
				continue
			}
		}
		if err := m.readTree(r); err != nil {
			return err
		}
	}
	return nil
}

// refreshDir re-reads a dirty directory: itself, its entries, new
// subdirectories recursively, and drops entries that are gone.
func (m *mirror) refreshDir(d string) error {
	if still, err := m.refreshSelf(d); !still || err != nil {
		return err
	}
	for k := range m.list {
		if k != d && parentRel(k) == d {
			if _, ok, _ := statEntry(m.root, k); !ok || !captured(m.root, d, filepath.Base(k)) {
				m.forget(k)
			}
		}
	}
	return m.readDir(d, false)
}

// refreshSelf re-reads directory d itself, and reports whether it is
// still a directory the mirror lists (its entries are then to re-read).
func (m *mirror) refreshSelf(d string) (bool, error) {
	if e, ok := m.list[d]; !ok || e.kind != 'd' {
		return false, nil // not captured, or its parent's re-read handles it
	}
	e, ok, err := statEntry(m.root, d)
	if err != nil {
		return false, err
	}
	if !ok || e.kind != 'd' {
		m.forget(d)
		if ok {
			m.list[d] = e
		}
		return false, nil
	}
	m.list[d] = e
	return true, nil
}

// refreshEntries re-reads a directory Changes.Entries narrows: itself and
// the entries it names, no other.
func (m *mirror) refreshEntries(d string, names []string) error {
	if still, err := m.refreshSelf(d); !still || err != nil {
		return err
	}
	for _, name := range names {
		child := joinRel(d, name)
		m.forget(child)
		if !captured(m.root, d, name) {
			continue
		}
		e, ok, err := statEntry(m.root, child)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		m.list[child] = e
		if e.kind == 'd' {
			if err := m.readDir(child, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// diff describes up to max differences between two listings.
func diff(got, want map[string]entry, max int) []string {
	var out []string
	for k, w := range want {
		if g, ok := got[k]; !ok {
			out = append(out, fmt.Sprintf("missing %q %c", k, w.kind))
		} else if g != w {
			out = append(out, fmt.Sprintf("stale %q: have %+v, want %+v", k, g, w))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			out = append(out, fmt.Sprintf("extra %q", k))
		}
	}
	slices.Sort(out)
	if len(out) > max {
		out = append(out[:max], fmt.Sprintf("... %d more", len(out)-max))
	}
	return out
}
