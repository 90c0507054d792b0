package index

import (
	"slices"
	"sync"

	"github.com/ckpt/ckpt/objects"
)

// treeCacheEntries bounds the trees a DB keeps resolved, counted in
// entries and one for each tree (an entry costs about a hundred bytes): enough for the
// directories a host's save, diff and restore of one tool call touch and
// their ancestors, on a workspace of a hundred thousand files.
const treeCacheEntries = 1 << 17

// treeCache keeps trees already resolved, by id, with the depth of their
// stored record, so that a save's tree deltas, its change stats, and the
// diff and restore after it read each directory's tree from the index
// once. A tree id is the hash of the tree's canonical encoding and is
// checked at first resolution, so an id maps to one tree for ever; what
// the cache must follow is only the index's records: a tree enters it
// when a resolution succeeds or a Batch that wrote it commits (replacing
// what it held for that id, so a record rewritten whole brings its new
// depth), and leaves it when a committed Batch deletes it. Reads that must
// see the records themselves (gc's and verify's walk of every tree) use
// DB.StoredTree. The oldest trees are evicted first. Safe for concurrent
// use; the entries it holds are never modified.
type treeCache struct {
	mu     sync.Mutex
	trees  map[objects.ID]cachedTree
	order  []cacheSlot // insertion order, oldest first, from head
	head   int
	next   uint64 // seq of the last put
	gen    uint64 // drops so far
	cost   int    // of the trees held: their entries, and one each
	budget int
}

type cachedTree struct {
	entries []objects.Entry
	depth   uint64
	seq     uint64 // of the put that made it
}

// cacheSlot is one put in insertion order: evicting it drops the tree
// only if no later put replaced it.
type cacheSlot struct {
	id  objects.ID
	seq uint64
}

func newTreeCache(budget int) *treeCache {
	return &treeCache{trees: map[objects.ID]cachedTree{}, budget: budget}
}

// get returns tree id's entries (shared: not to be modified) and the depth
// of its stored record.
func (c *treeCache) get(id objects.ID) ([]objects.Entry, uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.trees[id]
	return t.entries, t.depth, ok
}

// putLocked records tree id, whose entries must not be modified
// afterwards, replacing what the cache held for id. A tree over the whole
// budget is not kept.
func (c *treeCache) putLocked(id objects.ID, entries []objects.Entry, depth uint64) {
	if len(entries)+1 > c.budget {
		return
	}
	c.dropLocked(id)
	c.next++
	c.trees[id] = cachedTree{entries: entries, depth: depth, seq: c.next}
	c.order = append(c.order, cacheSlot{id: id, seq: c.next})
	c.cost += len(entries) + 1
	for c.cost > c.budget {
		if s := c.order[c.head]; c.live(s) {
			c.dropLocked(s.id)
		}
		c.head++
	}
	// Slots of replaced or dropped trees are kept no longer than it takes
	// live ones to outnumber them.
	if len(c.order)-c.head > 2*len(c.trees)+64 {
		c.order = slices.DeleteFunc(c.order[c.head:], func(s cacheSlot) bool { return !c.live(s) })
		c.head = 0
	}
}

// live reports whether slot s is still the put of the tree it names.
func (c *treeCache) live(s cacheSlot) bool {
	t, ok := c.trees[s.id]
	return ok && t.seq == s.seq
}

// generation counts the drops so far: a resolution that read the index
// before a drop may have read a record the drop's batch deleted, so it
// enters the cache only if the count is unchanged (putUnlessDropped).
func (c *treeCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// putUnlessDropped is putLocked, unless a tree was dropped since generation
// returned gen.
func (c *treeCache) putUnlessDropped(gen uint64, id objects.ID, entries []objects.Entry, depth uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == gen {
		c.putLocked(id, entries, depth)
	}
}

// dropLocked forgets tree id; its slots in order stay until evicted,
// where they no longer match.
func (c *treeCache) dropLocked(id objects.ID) {
	if t, ok := c.trees[id]; ok {
		c.cost -= len(t.entries) + 1
		delete(c.trees, id)
	}
}

// follow applies a committed Batch's tree writes, in the batch's order.
func (c *treeCache) follow(writes []treeWrite) {
	if len(writes) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, w := range writes {
		if w.deleted {
			c.gen++
			c.dropLocked(w.id)
			continue
		}
		c.putLocked(w.id, w.entries, w.depth)
	}
}
