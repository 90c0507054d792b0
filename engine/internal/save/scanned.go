package save

import (
	"path"
	"slices"
	"strings"

	"github.com/ckpt/ckpt/index"
)

// ScannedStat returns what the scan of snap saw of each file, for a caller
// that must tell whether a file changed since (a restore about to replace
// it): the stat-cache record of the file after that scan (snap's own
// records first, then the index's, which the scan found still true). It
// answers ok only for a record that tells the scan's read apart from a
// later change: not a racy one (its mtime within racyMargin of the
// record's writing, whose content the scan hashed though a rewrite may keep
// the stat), not a kept one (a file the scan could not read, recorded
// without its stat). With StatCacheReadOnly, or for a scan that kept no
// records, it answers nothing: the index's records may then be older than
// the scan. The function is for one goroutine.
func (st *Store) ScannedStat(snap *Snapshot) func(rel string) (index.CachedFile, bool) {
	if st.StatCacheReadOnly {
		return func(string) (index.CachedFile, bool) { return index.CachedFile{}, false }
	}
	dirs := map[string]*index.DirCache{} // nil: no record
	return func(rel string) (index.CachedFile, bool) {
		dir := parentDir(rel)
		dc, seen := dirs[dir]
		if !seen {
			if own, ok := snap.Caches[dir]; ok {
				dc = &own
			} else if stored, ok, err := st.DB.DirCache(dir); err == nil && ok {
				dc = &stored
			}
			dirs[dir] = dc
		}
		if dc == nil {
			return index.CachedFile{}, false
		}
		i, found := slices.BinarySearchFunc(dc.Entries, path.Base(rel), func(c index.CachedFile, name string) int {
			return strings.Compare(c.Name, name)
		})
		if !found {
			return index.CachedFile{}, false
		}
		c := dc.Entries[i]
		if c.MtimeNs == 0 || c.MtimeNs+racyMargin > dc.WrittenNs {
			return index.CachedFile{}, false
		}
		return c, true
	}
}
