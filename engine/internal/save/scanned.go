package save

import (
	"path"
	"slices"
	"strings"

	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/objects"
	"github.com/ckpt/ckpt/walker"
)

// ScannedStat returns what the scan of snap saw of each file, for a caller
// that must tell whether a file changed since (a restore about to replace
// it): the stat-cache record of the file (snap's own records first, then
// the index's), when it describes the content snap holds at that path (a
// scan may trust more than the records: a restore's vouching, a watcher's
// quiet directory, both before the records are refreshed), and not a kept
// one (a file the scan could not read, recorded without its stat). Each
// record holds a stat taken before its content was read (cacheRecord), so
// a file whose stat differs from it now changed since. A racy record (its
// mtime within racyMargin, or the stamp's resolution, of its writing) is
// answered too: it cannot show a file unchanged (a rewrite within the
// stamp's resolution keeps the stat), and the caller only looks for a
// difference; left out, it left unguarded a file the scan had read just
// after an editor saved it. With StatCacheReadOnly, or for a snapshot the
// Tracker vouched for (no scan read the files, and the records may be
// older than a restore that wrote the same content again), it answers
// nothing. The function is for one goroutine.
func (st *Store) ScannedStat(snap *Snapshot) func(rel string) (index.CachedFile, bool) {
	if st.StatCacheReadOnly || snap.vouched {
		return func(string) (index.CachedFile, bool) { return index.CachedFile{}, false }
	}
	src := st.TreeSource(snap)
	type dirView struct {
		record *index.DirCache // nil: none
		tree   *objects.Tree   // nil: not a directory snap holds
	}
	dirs := map[string]dirView{}
	var view func(dir string) dirView
	view = func(dir string) dirView {
		if v, ok := dirs[dir]; ok {
			return v
		}
		var v dirView
		if own, ok := snap.Caches[dir]; ok {
			v.record = &own
		} else if stored, ok, err := st.DB.DirCache(dir); err == nil && ok {
			v.record = &stored
		}
		id := snap.Root
		if dir != "" {
			parent := view(parentDir(dir))
			if e, ok := findName(parent.tree, path.Base(dir)); ok && e.Kind == objects.KindDir {
				id = e.ID
			} else {
				id = objects.ID{}
			}
		}
		if !id.IsZero() {
			if t, err := src.Tree(id); err == nil {
				v.tree = &t
			}
		}
		dirs[dir] = v
		return v
	}
	return func(rel string) (index.CachedFile, bool) {
		v := view(parentDir(rel))
		if v.record == nil {
			return index.CachedFile{}, false
		}
		i, found := slices.BinarySearchFunc(v.record.Entries, path.Base(rel), func(c index.CachedFile, name string) int {
			return strings.Compare(c.Name, name)
		})
		if !found {
			return index.CachedFile{}, false
		}
		c := v.record.Entries[i]
		if cachedKind(c.Mode) != walker.KindFile {
			// A symlink's record matches on its target alone (a link made
			// again keeps its record, with the old link's stamp), and
			// Windows gives a link's lookup no size.
			return index.CachedFile{}, false
		}
		held, ok := findName(v.tree, c.Name)
		if !ok || held.ID != c.ID || c.MtimeNs == 0 {
			return index.CachedFile{}, false
		}
		return c, true
	}
}

// findName returns the entry of t named name (t may be nil).
func findName(t *objects.Tree, name string) (objects.Entry, bool) {
	if t == nil {
		return objects.Entry{}, false
	}
	i, found := slices.BinarySearchFunc(t.Entries, name, func(e objects.Entry, name string) int {
		return strings.Compare(e.Name, name)
	})
	if !found {
		return objects.Entry{}, false
	}
	return t.Entries[i], true
}
