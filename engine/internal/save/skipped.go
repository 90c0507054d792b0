package save

import (
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/ckpt/ckpt/walker"
)

// unlisted records the directories a watched scan took from the stat
// cache instead of listing them: those it replayed (their own entries)
// and those it pruned (everything below them). A cold walk lists them and
// reports what it skips there (special files, files over the size cap,
// unreadable paths); the scan reports instead what the scan that last
// committed reported there (Tracker.lastSkipped), which the watcher
// vouches is still so. So a watched save reports the skipped paths a cold
// one does. It is safe for concurrent use.
type unlisted struct {
	mu       sync.Mutex
	replayed map[string]bool
	pruned   map[string]bool
	// looked holds the paths of the entries of replayed directories
	// that the scan looked up again, and so reported as it found them.
	looked map[string]bool
}

func newUnlisted() *unlisted {
	return &unlisted{replayed: map[string]bool{}, pruned: map[string]bool{}, looked: map[string]bool{}}
}

// lookedUp records that the scan looks the entries names of directory dir
// up again.
func (u *unlisted) lookedUp(dir string, names []string) {
	if len(names) == 0 {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, n := range names {
		u.looked[path.Join(dir, n)] = true
	}
}

// note records d if the scan did not list it.
func (u *unlisted) note(d *walker.Dir) {
	if !d.Pruned && !d.Replayed {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if d.Pruned {
		u.pruned[d.Path] = true
	} else {
		u.replayed[d.Path] = true
	}
}

// covers reports whether the scan took the entry of rel in its directory
// from the stat cache: the directory was replayed and rel not looked up
// again, or it lies below a pruned one.
func (u *unlisted) covers(rel string) bool {
	dir := parentDir(rel)
	if u.replayed[dir] {
		return !u.looked[rel]
	}
	for d := dir; d != ""; d = parentDir(d) {
		if u.pruned[d] {
			return true
		}
	}
	return false
}

// withCarried returns fresh, the paths the scan itself skipped, together
// with those of last (what the last committed scan reported) whose
// directory entry the scan took from the stat cache. A path in both is
// reported once, as the scan found it.
func (u *unlisted) withCarried(fresh, last []walker.Skipped) []walker.Skipped {
	u.mu.Lock()
	defer u.mu.Unlock()
	seen := make(map[string]bool, len(fresh))
	for _, s := range fresh {
		seen[s.Path] = true
	}
	for _, s := range last {
		if !seen[s.Path] && u.covers(s.Path) {
			fresh = append(fresh, s)
		}
	}
	return fresh
}

// sortSkipped orders skipped paths by path, the order a scan reports them in.
func sortSkipped(s []walker.Skipped) {
	slices.SortStableFunc(s, func(a, b walker.Skipped) int { return strings.Compare(a.Path, b.Path) })
}
