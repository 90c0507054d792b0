package watch

import (
	"slices"
	"time"
)

// pending accumulates the marks of one interval between Changes calls.
type pending struct {
	all     bool
	reasons Reason
	dirty   map[string]struct{}
	rescan  map[string]struct{}
}

func newPending() pending {
	return pending{dirty: map[string]struct{}{}, rescan: map[string]struct{}{}}
}

func (p *pending) markDirty(rel string) { p.dirty[rel] = struct{}{} }

// size is the number of distinct paths pending.
func (p *pending) size() int { return len(p.dirty) + len(p.rescan) }

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
		c.Dirty = append(extraDirty, mapKeys(p.dirty)...)
		c.Rescan = mapKeys(p.rescan)
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
