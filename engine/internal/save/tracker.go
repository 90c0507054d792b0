package save

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ckpt/ckpt/internal/watch"
	"github.com/ckpt/ckpt/objects"
	"github.com/ckpt/ckpt/walker"
)

// Tracker turns a watch.Watcher's reports into what a scan may skip. The
// watcher reports each change once; a scan whose stat-cache records never
// reach the index (a failed save, a workspace diff) must not lose them, so
// the Tracker keeps every reported path pending until a scan that began
// after the report has committed its stat cache (Settle).
//
// A file with another hard link can be written through that link, perhaps
// from outside the workspace, with no event in its directory; so every
// directory whose last committed listing held a file with more than one
// link is re-read (each entry lstatted) at every scan, and a scan that
// finds in a directory a file with several links that the directory's
// last committed listing did not show there walks everything once (see
// newlyLinked).
//
// It is safe for concurrent use.
type Tracker struct {
	w *watch.Watcher
	// rules stat-checks the rule files outside the workspace's captured
	// directories at every scan; guarded by mu.
	rules *ruleFiles

	mu     sync.Mutex
	gen    uint64            // number of plans handed out
	all    uint64            // generation of the latest pending All, 0 when none
	dirty  map[string]uint64 // pending Dirty paths re-read whole, by the generation that added them
	rescan map[string]uint64 // pending Rescan paths, likewise
	// entries holds, for a Dirty path the watcher narrowed to some of its
	// entries (watch.Changes.Entries), their names, likewise; a path also
	// in dirty is re-read whole.
	entries map[string]map[string]uint64
	linked  map[string]dirLinks // directories holding a file with several hard links
	// skipped is what the last scan to commit its stat cache reported
	// skipped (Snapshot.Skipped): a later scan reports it again where it
	// does not list (see unlisted).
	skipped []walker.Skipped
	// vouched is the root an Audit vouched the workspace holds, nil when
	// none or when any change was reported since (see Audit.End).
	vouched *objects.ID
}

// NewTracker tracks the changes w reports for the workspace, whose ignore
// rules also come from ruleFiles (absolute paths below the workspace, such
// as its .git/info/exclude): any sign of change to one of them, or to a
// directory on its path, makes the next scan walk everything.
func NewTracker(w *watch.Watcher, workspace string, ruleFiles []string) *Tracker {
	return &Tracker{w: w, rules: newRuleFiles(workspace, ruleFiles), dirty: map[string]uint64{}, rescan: map[string]uint64{},
		entries: map[string]map[string]uint64{}, linked: map[string]dirLinks{}}
}

// plan is what one scan may trust: every directory it may prune lies
// outside hot and below no rescan path; every directory it may replay from
// the stat cache is hot only for what lies below it and the entries names
// gives for it. all means it may trust nothing.
type plan struct {
	t      *Tracker
	gen    uint64
	all    bool
	hot    map[string]bool // pending Dirty and Rescan paths and all their ancestors
	own    map[string]bool // the directories to list whatever their cache: Dirty, Rescan and linked ones
	rescan map[string]bool
	// names holds, for a directory not in own whose changes the watcher
	// narrowed to some of its entries, their names, sorted.
	names map[string][]string
}

// begin takes the watcher's changes since the previous call and returns
// the plan of a scan over everything still pending.
func (t *Tracker) begin() *plan {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.absorbLocked()
	return t.planLocked()
}

// planLocked is the plan of a scan over everything pending now.
func (t *Tracker) planLocked() *plan {
	p := &plan{t: t, gen: t.gen, all: t.all != 0, hot: map[string]bool{}, own: map[string]bool{}, rescan: map[string]bool{},
		names: map[string][]string{}}
	if p.all {
		return p
	}
	for d, names := range t.entries {
		p.names[d] = slices.Sorted(maps.Keys(names))
		p.warm(d)
	}
	for d := range t.dirty {
		p.heat(d)
	}
	for d := range t.rescan {
		p.rescan[d] = true
		p.heat(d)
	}
	for d, l := range t.linked {
		if l.kind == ruleLinks {
			p.rescan[d] = true
		}
		p.heat(d)
	}
	return p
}

// links says what another hard link to a directory's files can change
// with no event in the directory.
type links uint8

const (
	noLinks   links = iota
	fileLinks       // a file's content: the directory is listed at every scan
	ruleLinks       // an ignore-rule file's: its subtree is walked at every scan
)

// dirLinks is what a scan found of the hard links in one directory.
type dirLinks struct {
	kind links
	// files identifies the directory's files (rule files among them) that
	// have more than one link, sorted (see compareFiles).
	files []fileID
}

// fileID identifies a file by its device and inode numbers: its names
// share it.
type fileID struct{ dev, ino uint64 }

func compareFiles(a, b fileID) int {
	return cmp.Or(cmp.Compare(a.dev, b.dev), cmp.Compare(a.ino, b.ino))
}

// holds reports whether f is among the files l records with several links.
func (l dirLinks) holds(f fileID) bool {
	_, found := slices.BinarySearchFunc(l.files, f, compareFiles)
	return found
}

// absorbLocked starts a generation holding the watcher's changes since
// the previous call.
func (t *Tracker) absorbLocked() { t.absorbChangesLocked(t.w.Changes()) }

// absorbChangesLocked starts a generation holding c, the watcher's
// changes since the previous call; any change ends a vouching.
func (t *Tracker) absorbChangesLocked(c watch.Changes) {
	t.gen++
	// The rule files are checked at every scan, All or not, so the next
	// one compares against this one's stamps.
	rules := t.rules.changed(time.Now())
	if c.All || rules {
		t.all = t.gen
	}
	if c.All || rules || len(c.Dirty) > 0 || len(c.Rescan) > 0 {
		t.vouched = nil
	}
	for _, d := range c.Dirty {
		names, narrowed := c.Entries[d]
		if !narrowed {
			t.dirty[d] = t.gen
			continue
		}
		pending := t.entries[d]
		if pending == nil {
			pending = map[string]uint64{}
			t.entries[d] = pending
		}
		for _, n := range names {
			pending[n] = t.gen
		}
		if len(pending) > watch.MaxEntryNames { // as the watcher would have
			t.dirty[d] = t.gen
			delete(t.entries, d)
		}
	}
	for _, d := range c.Rescan {
		t.rescan[d] = t.gen
	}
}

// Absorb takes the watcher's changes now: every event of an operation
// completed before the call has then reached the watcher's hooks
// (watch.Options.Written) too.
func (t *Tracker) Absorb() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.absorbLocked()
}

// missed keeps, of the directories a verification found to differ from
// the stat cache, those no change is pending for (the watcher's changes
// are taken first, so a change made while the verification ran is not
// counted), and makes them dirty: the next scan re-reads them. Any
// directory found to differ ends a vouching: the directories a restore
// wrote, pending as they are, are re-read by no scan while it lasts.
func (t *Tracker) missed(dirs []string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.absorbLocked()
	if len(dirs) > 0 {
		t.vouched = nil
	}
	now := t.planLocked()
	var missed []string
	for _, d := range dirs {
		if now.quiet(d) {
			missed = append(missed, d)
			t.dirty[d] = t.gen
		}
	}
	return missed
}

// newlyLinked reports whether linked, a scan's, has a directory holding a
// file with several hard links that the tracker did not know it holds
// (or an ignore-rule file it excludes that has another link, where the
// tracker knew of no rule file with one there). Files are known by
// identity, not by directory: a link made in a directory that is listed
// at every scan already, for the other files with links it holds, is as
// new as one made anywhere else, and the file's other names may lie in
// directories no scan re-reads.
func (t *Tracker) newlyLinked(linked map[string]dirLinks) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for d, l := range linked {
		known := t.linked[d]
		if l.kind > known.kind {
			return true
		}
		for _, f := range l.files {
			if !known.holds(f) {
				return true
			}
		}
	}
	return false
}

// trustNothingNext makes the plans begun from now on trust nothing: they
// list every directory. A plan begun before (a presave's, a refresh's,
// of generation t.gen) does not end that when it settles: only one of a
// later generation does.
func (t *Tracker) trustNothingNext() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.all == 0 {
		t.all = t.gen + 1
	}
}

// trustsNothing reports whether the scan must list every directory.
func (p *plan) trustsNothing() bool { return p.all || p.rescan[""] }

// heat marks dir as one to re-read, and it and its ancestors as holding
// something to re-read.
func (p *plan) heat(dir string) {
	p.own[dir] = true
	p.warm(dir)
}

// warm marks dir and its ancestors as holding something to re-read.
func (p *plan) warm(dir string) {
	for !p.hot[dir] {
		p.hot[dir] = true
		if dir == "" {
			return
		}
		dir = parentDir(dir)
	}
}

// quiet reports whether the watcher vouches that nothing below dir (a
// directory that was watched) changed since the stat cache recorded it.
func (p *plan) quiet(dir string) bool {
	return !p.all && !p.hot[dir] && !p.belowRescan(dir)
}

// passage reports whether the watcher vouches for the entries of dir (a
// directory that was watched) but not for everything below it: nothing
// was created, removed, renamed or changed in dir itself since the stat
// cache recorded it, but for the entries changed names, so a scan may
// take its listing from there and look those names up again.
func (p *plan) passage(dir string) (changed []string, ok bool) {
	if p.all || !p.hot[dir] || p.own[dir] || p.belowRescan(dir) {
		return nil, false
	}
	return p.names[dir], true
}

// belowRescan reports whether a strict ancestor of dir is a Rescan path.
func (p *plan) belowRescan(dir string) bool {
	for d := dir; d != ""; {
		d = parentDir(d)
		if p.rescan[d] {
			return true
		}
	}
	return false
}

// watch tells the watcher that the scan is about to list dir.
func (p *plan) watch(dir string) { p.t.w.Watch(dir) }

// Settle drops what the plan of snap covered from the pending changes,
// once snap's stat-cache records are committed. A snapshot taken without
// a Tracker is ignored.
func (t *Tracker) Settle(snap *Snapshot) {
	p := snap.plan
	if p == nil || p.t != t {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.all <= p.gen {
		t.all = 0
	}
	for d, g := range t.dirty {
		if g <= p.gen {
			delete(t.dirty, d)
		}
	}
	for d, g := range t.rescan {
		if g <= p.gen {
			delete(t.rescan, d)
		}
	}
	for d, names := range t.entries {
		for n, g := range names {
			if g <= p.gen {
				delete(names, n)
			}
		}
		if len(names) == 0 {
			delete(t.entries, d)
		}
	}
	for d, l := range snap.linked {
		if l.kind != noLinks {
			t.linked[d] = l
		} else {
			delete(t.linked, d)
		}
	}
	t.skipped = slices.Clone(snap.Skipped)
	for _, gone := range snap.vanished {
		for d := range t.linked {
			if d == gone || strings.HasPrefix(d, gone+"/") {
				delete(t.linked, d)
			}
		}
	}
}

// lastSkipped is what the last scan to commit reported skipped.
func (t *Tracker) lastSkipped() []walker.Skipped {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.skipped
}

// Close stops the watcher.
func (t *Tracker) Close() error { return t.w.Close() }

// Stats returns the watcher's counters.
func (t *Tracker) Stats() watch.Stats { return t.w.Stats() }
