package restore

import (
	"cmp"
	"slices"

	"github.com/ckpt/ckpt/objects"
)

// Blobs counts the blobs the plan writes (file contents and symlink
// targets): how many of its writes read each.
func (p *Plan) Blobs() map[objects.ID]int {
	uses := map[objects.ID]int{}
	for _, o := range p.writes {
		if reads(o) {
			uses[o.ent.ID]++
		}
	}
	return uses
}

// OrderWrites orders the plan's writes by the rank of the blob each reads,
// lowest first, the writes that read none (mode changes) first of all, and
// keeps the plan's order among equal ranks: a restore whose blobs arrive
// one after another (a clone) writes them in the order they come.
func (p *Plan) OrderWrites(rank func(objects.ID) int) {
	key := func(o op) int {
		if !reads(o) {
			return -1 << 62
		}
		return rank(o.ent.ID)
	}
	slices.SortStableFunc(p.writes, func(a, b op) int { return cmp.Compare(key(a), key(b)) })
}

// reads reports whether o reads a blob.
func reads(o op) bool { return o.kind == opWrite || o.kind == opLink }
