package maint

import "github.com/ckpt/ckpt/objects"

// recordKey names one stored record: the members of a group record share
// its pack and offset.
type recordKey struct {
	pack   uint32
	offset int64
}

func keyOf(loc objects.Locator) recordKey { return recordKey{loc.Pack, loc.Offset} }

// record is one stored record that live blobs were found in.
type record struct {
	length int64 // bytes in the pack, header included
	live   int32 // blobs of the record still referenced
	owner  int32 // as blobNode.owner, over the record's live blobs
	// liveRaw is the content bytes of the live members of a group record.
	liveRaw int64
	// regroup: a collection rewriting the record's pack moves its live
	// members into new groups instead of copying the mostly dead group.
	regroup bool
}

// hold links blob n to its record and counts it as live there.
func (g *Graph) hold(n *blobNode) {
	k := keyOf(n.loc)
	r := g.records[k]
	if r == nil {
		r = &record{length: int64(n.loc.Length)}
		g.records[k] = r
	}
	r.live++
	if n.loc.Grouped() {
		r.liveRaw += n.loc.Size
	}
	n.rec = r
}

// release drops checkpoint n from the graph and returns the record bytes
// that nothing else keeps alive: a record is freed with its last live blob.
func (g *Graph) release(n *cpNode) int64 {
	if n.released {
		return 0
	}
	n.released = true
	freed := g.decTree(n.cp.Root)
	if !n.cp.State.IsZero() {
		freed += g.decBlob(n.cp.State)
	}
	return freed
}

func (g *Graph) decTree(id objects.ID) int64 {
	n := g.trees[id]
	if n == nil || n.refs <= 0 {
		return 0
	}
	if n.refs--; n.refs > 0 {
		return 0
	}
	var freed int64
	for _, s := range n.subs {
		freed += g.decTree(s)
	}
	for _, b := range n.blobs {
		freed += g.decBlob(b)
	}
	return freed
}

func (g *Graph) decBlob(id objects.ID) int64 {
	n := g.blobs[id]
	if n == nil || n.refs <= 0 {
		return 0
	}
	if n.refs--; n.refs > 0 {
		return 0
	}
	var freed int64
	if n.rec != nil {
		if n.loc.Grouped() {
			n.rec.liveRaw -= n.loc.Size
		}
		if n.rec.live--; n.rec.live == 0 {
			freed = n.rec.length
		}
	}
	for _, c := range n.needs {
		freed += g.decBlob(c)
	}
	return freed
}

// liveBytes is the bytes of every record a referenced blob lies in.
func (g *Graph) liveBytes() int64 {
	var total int64
	for _, r := range g.records {
		if r.live > 0 {
			total += r.length
		}
	}
	return total
}

// eachLiveRecord calls fn once per record that holds a referenced blob,
// with the locator of one of its blobs.
func (g *Graph) eachLiveRecord(fn func(loc objects.Locator, r *record)) {
	seen := make(map[recordKey]bool, len(g.records))
	for _, n := range g.blobs {
		if n.rec == nil || n.refs <= 0 || seen[keyOf(n.loc)] {
			continue
		}
		seen[keyOf(n.loc)] = true
		fn(n.loc, n.rec)
	}
}

// liveTree and liveBlob report whether the id is still referenced.
func (g *Graph) liveTree(id objects.ID) bool {
	n := g.trees[id]
	return n != nil && n.refs > 0
}

func (g *Graph) liveBlob(id objects.ID) bool {
	n := g.blobs[id]
	return n != nil && n.refs > 0
}

// markOwners records, for every live blob, whether one task alone reaches
// it (owner = task index + 1) or several do (owner = -1).
func (g *Graph) markOwners() {
	for i, task := range g.tasks {
		mark := int32(i + 1)
		for _, c := range g.cps {
			if !c.released && c.cp.Task == task {
				g.ownTree(c.cp.Root, mark)
				if !c.cp.State.IsZero() {
					g.ownBlob(c.cp.State, mark)
				}
			}
		}
	}
}

func (g *Graph) ownTree(id objects.ID, mark int32) {
	n := g.trees[id]
	if n == nil || n.visit == mark {
		return
	}
	n.visit = mark
	for _, s := range n.subs {
		g.ownTree(s, mark)
	}
	for _, b := range n.blobs {
		g.ownBlob(b, mark)
	}
}

func (g *Graph) ownBlob(id objects.ID, mark int32) {
	n := g.blobs[id]
	if n == nil || n.owner == mark || n.owner == -1 {
		return
	}
	n.owner = joinOwner(n.owner, mark)
	for _, c := range n.needs {
		g.ownBlob(c, mark)
	}
}

// joinOwner combines two owner marks: unowned takes the other, two
// different tasks make a shared one.
func joinOwner(a, b int32) int32 {
	switch {
	case a == 0:
		return b
	case a == b:
		return a
	}
	return -1
}

// ExclusiveBytes returns, per task name, the bytes of the records only
// that task's checkpoints reference: what dropping the task frees. A
// group record whose live members several tasks share belongs to none.
func (g *Graph) ExclusiveBytes() map[string]int64 {
	g.markOwners()
	out := make(map[string]int64, len(g.tasks))
	for _, task := range g.tasks {
		out[task] = 0
	}
	for _, r := range g.records {
		r.owner = 0
	}
	for _, n := range g.blobs {
		if n.rec != nil && n.refs > 0 && n.owner != 0 {
			n.rec.owner = joinOwner(n.rec.owner, n.owner)
		}
	}
	for _, r := range g.records {
		if r.owner > 0 && r.live > 0 {
			out[g.tasks[r.owner-1]] += r.length
		}
	}
	return out
}

// logicalSize returns the total size of the files under tree id, counting
// every occurrence; memo caches it per tree.
func (g *Graph) logicalSize(id objects.ID, memo map[objects.ID]int64) int64 {
	if v, ok := memo[id]; ok {
		return v
	}
	n := g.trees[id]
	if n == nil {
		return 0
	}
	total := n.fileBytes
	for _, s := range n.subs {
		total += g.logicalSize(s, memo)
	}
	memo[id] = total
	return total
}
