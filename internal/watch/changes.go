package watch

import (
	"slices"
	"time"
)

// pending accumulates the marks of one interval between Changes calls.
// A directory to re-read is in dirty (whole) or in entries (with the
// names of the entries that changed), never in both.
type pending struct {
	all     bool
	reasons Reason
	dirty   map[string]struct{}
	rescan  map[string]struct{}
	entries map[string]map[string]struct{}
}

func newPending() pending {
	return pending{dirty: map[string]struct{}{}, rescan: map[string]struct{}{}, entries: map[string]map[string]struct{}{}}
}

// markDirty records that directory rel is to be re-read whole.
func (p *pending) markDirty(rel string) {
	p.dirty[rel] = struct{}{}
	delete(p.entries, rel)
}

// MaxEntryNames is the most entries of one directory that Changes names:
// beyond it the directory is re-read whole, since listing it is then
// about as cheap as looking each name up.
const MaxEntryNames = 32

// markEntry records that entry name of directory rel changed.
func (p *pending) markEntry(rel, name string) {
	if _, whole := p.dirty[rel]; whole {
		return
	}
	names := p.entries[rel]
	if _, ok := names[name]; ok {
		return
	}
	if len(names) == MaxEntryNames {
		p.markDirty(rel)
		return
	}
	if names == nil {
		names = map[string]struct{}{}
		p.entries[rel] = names
	}
	names[name] = struct{}{}
}

// size is the number of distinct paths pending (the names of a
// directory's entries are bounded by MaxEntryNames).
func (p *pending) size() int { return len(p.dirty) + len(p.entries) + len(p.rescan) }

func (p *pending) markRescan(rel string, why Reason) {
	p.rescan[rel] = struct{}{}
	p.reasons |= why
}

func (p *pending) markAll(why Reason) {
	p.all = true
	p.reasons |= why
}

// take returns the interval's Changes, adding extraDirty to Dirty, and
// starts a new interval.
func (p *pending) take(extraDirty []string) Changes {
	c := Changes{All: p.all, Reasons: p.reasons}
	if !c.All {
		for _, d := range extraDirty { // re-read whole: no names for them
			p.markDirty(d)
		}
		c.Dirty = mapKeys(p.dirty)
		c.Rescan = mapKeys(p.rescan)
		for dir, names := range p.entries {
			if c.Entries == nil {
				c.Entries = make(map[string][]string, len(p.entries))
			}
			c.Dirty = append(c.Dirty, dir)
			c.Entries[dir] = mapKeys(names)
		}
	}
	*p = newPending()
	return c
}

func mapKeys(m map[string]struct{}) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// normalizeChanges normalizes Dirty and Rescan, sorts the names of
// Entries and drops those of directories no longer in Dirty.
func normalizeChanges(c *Changes) {
	c.Dirty, c.Rescan = normalize(c.Dirty, c.Rescan)
	for dir, names := range c.Entries {
		if _, ok := slices.BinarySearch(c.Dirty, dir); !ok {
			delete(c.Entries, dir)
			continue
		}
		slices.Sort(names)
	}
}

// normalize sorts and deduplicates dirty and rescan and drops every path
// that lies at or below a rescan path (a rescan path's own entry in its
// parent stays covered by the parent, which the caller re-reads when it is
// dirty).
func normalize(dirty, rescan []string) ([]string, []string) {
	slices.Sort(rescan)
	rescan = slices.Compact(rescan)
	var kept []string
	for _, r := range rescan {
		if !underAny(r, kept) {
			kept = append(kept, r)
		}
	}
	slices.Sort(dirty)
	dirty = slices.Compact(dirty)
	out := dirty[:0]
	for _, d := range dirty {
		if !underAny(d, kept) {
			out = append(out, d)
		}
	}
	return out, kept
}

// underAny reports whether p equals or lies below one of the sorted roots.
func underAny(p string, roots []string) bool {
	for {
		if _, ok := slices.BinarySearch(roots, p); ok {
			return true
		}
		if p == "" {
			return false
		}
		p = parentRel(p)
	}
}

// clockCheck detects a wall clock that moved against the monotonic clock.
type clockCheck struct {
	clock    func() (time.Time, time.Duration)
	lastWall time.Time
	lastMono time.Duration
}

func newClockCheck(clock func() (time.Time, time.Duration)) clockCheck {
	w, m := clock()
	return clockCheck{clock: clock, lastWall: w, lastMono: m}
}

// jumped reports whether the wall clock jumped since the previous call.
func (c *clockCheck) jumped() bool {
	w, m := c.clock()
	drift := w.Sub(c.lastWall) - (m - c.lastMono)
	c.lastWall, c.lastMono = w, m
	return drift > clockJumpLimit || drift < -clockJumpLimit
}
