package faultfs

import (
	"maps"
	"math/rand/v2"
	"slices"
)

// CrashConfig shapes the file system Crash returns.
type CrashConfig struct {
	// UnsyncedPercent is the chance (0 to 100) that the unsynced entry
	// changes of a directory survive the crash anyway, all of them (a
	// journaled file system commits a directory's changes in order: pebble
	// relies on that between a new MANIFEST and the marker naming it), and
	// that each unsynced 4 KiB block of a file does, on its own; 0 keeps
	// exactly what was synced.
	UnsyncedPercent int
	// Rand draws those chances; needed when UnsyncedPercent > 0.
	Rand *rand.Rand
}

// crashBlock is the unit in which unsynced file data survives a crash.
const crashBlock = 4096

// Crash returns the file system a power cut at this moment would leave
// (see MemFS and CrashConfig); y is unchanged. Locks are not kept.
func (y *MemFS) Crash(cfg CrashConfig) *MemFS {
	y.mu.Lock()
	defer y.mu.Unlock()
	c := &crasher{cfg: cfg, done: map[*memNode]*memNode{}}
	return &MemFS{root: c.node(y.root), locks: map[*memNode]bool{}}
}

// Clone returns a copy of y, synced state included, that changes apart.
func (y *MemFS) Clone() *MemFS {
	y.mu.Lock()
	defer y.mu.Unlock()
	c := &cloner{done: map[*memNode]*memNode{}}
	return &MemFS{root: c.node(y.root), locks: map[*memNode]bool{}}
}

type crasher struct {
	cfg  CrashConfig
	done map[*memNode]*memNode // hard links stay one node
}

func (c *crasher) keep() bool {
	return c.cfg.UnsyncedPercent > 0 && c.cfg.Rand.IntN(100) < c.cfg.UnsyncedPercent
}

func (c *crasher) node(n *memNode) *memNode {
	if m := c.done[n]; m != nil {
		return m
	}
	m := &memNode{dir: n.dir, mod: n.mod}
	c.done[n] = m
	if !n.dir {
		m.data = slices.Clone(n.synced)
		for off := 0; off < len(n.data); off += crashBlock {
			if !c.keep() {
				continue
			}
			block := n.data[off:min(off+crashBlock, len(n.data))]
			if grow := off + len(block) - len(m.data); grow > 0 {
				m.data = append(m.data, make([]byte, grow)...)
			}
			copy(m.data[off:], block)
		}
		m.synced = slices.Clone(m.data)
		return m
	}
	entries := n.syncedChildren
	if c.keep() {
		entries = n.children
	}
	m.children = map[string]*memNode{}
	for name, child := range entries {
		m.children[name] = c.node(child)
	}
	m.syncedChildren = maps.Clone(m.children)
	return m
}

type cloner struct{ done map[*memNode]*memNode }

func (c *cloner) node(n *memNode) *memNode {
	if m := c.done[n]; m != nil {
		return m
	}
	m := &memNode{dir: n.dir, mod: n.mod, data: slices.Clone(n.data), synced: slices.Clone(n.synced)}
	c.done[n] = m
	if n.dir {
		m.children, m.syncedChildren = map[string]*memNode{}, map[string]*memNode{}
		for name, child := range n.children {
			m.children[name] = c.node(child)
		}
		for name, child := range n.syncedChildren {
			m.syncedChildren[name] = c.node(child)
		}
	}
	return m
}
