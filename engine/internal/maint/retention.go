package maint

import (
	"cmp"
	"slices"
	"time"

	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/objects"
)

// Policy says which checkpoints a collection drops; zero fields mean no
// limit. A task's head is never dropped.
type Policy struct {
	KeepLast int           // keep the KeepLast highest-sequence checkpoints of each task
	MaxAge   time.Duration // drop checkpoints older than this
	MaxSize  int64         // then drop the oldest until the live records fit
}

// Dropped is a checkpoint a policy released, and the limit that did.
type Dropped struct {
	ID     objects.ID
	Task   string
	Seq    uint64
	Time   time.Time
	Kind   index.CheckpointKind
	Reason string // "keep-last", "max-age" or "max-size"
}

// ApplyRetention releases, in g, the checkpoints p drops, and returns
// them: first each task's keep-last and max-age limits, then the oldest
// checkpoints of all tasks until the records the rest reference fit in
// MaxSize (or only heads are left).
func (g *Graph) ApplyRetention(p Policy, now time.Time) []Dropped {
	var out []Dropped
	drop := func(c *cpNode, reason string) int64 {
		out = append(out, Dropped{ID: c.id, Task: c.cp.Task, Seq: c.cp.Seq, Time: c.cp.Time, Kind: c.cp.Kind, Reason: reason})
		return g.release(c)
	}
	byTask := map[string][]*cpNode{}
	for _, c := range g.cps {
		byTask[c.cp.Task] = append(byTask[c.cp.Task], c)
	}
	for _, task := range g.tasks {
		cps := byTask[task]
		slices.SortFunc(cps, func(a, b *cpNode) int { return cmp.Compare(a.cp.Seq, b.cp.Seq) })
		for i, c := range cps {
			switch {
			case c.head:
			case p.KeepLast > 0 && i < len(cps)-p.KeepLast:
				drop(c, "keep-last")
			case p.MaxAge > 0 && c.cp.Time.Before(now.Add(-p.MaxAge)):
				drop(c, "max-age")
			}
		}
	}
	if p.MaxSize <= 0 {
		return out
	}
	var candidates []*cpNode
	for _, c := range g.cps {
		if !c.head && !c.released {
			candidates = append(candidates, c)
		}
	}
	slices.SortFunc(candidates, func(a, b *cpNode) int {
		return cmp.Or(a.cp.Time.Compare(b.cp.Time), cmp.Compare(a.cp.Task, b.cp.Task), cmp.Compare(a.cp.Seq, b.cp.Seq))
	})
	live := g.liveBytes()
	for _, c := range candidates {
		if live <= p.MaxSize {
			break
		}
		live -= drop(c, "max-size")
	}
	return out
}
