package objects

import (
	"bytes"
	"container/list"
	"errors"
	"sync"
)

// groupCacheBytes bounds what the group readers a Store keeps hold (the
// stored frames they fetched and what they decoded), as it stands each
// time a reader is added or taken (see groupCache.trimLocked). A save
// reads the previous version of every file it stores as a delta, a
// member of a compressed group whose frame it decodes up to the member;
// the diff and the restore that follow read the same members. Some 200
// KiB a group, this keeps the groups of an edit of a hundred files or so.
const groupCacheBytes = 32 << 20

// groupCache keeps the readers of the groups the Store and its sessions
// read last, least recently used dropped first (see groupReader): the
// frames they fetched and what was decoded of them. A read through a
// reader another operation filled still fetches from disk the record's
// header and the stored bytes of every frame it uses (once per read, or
// once per session) and goes on only when they are the bytes the reader
// holds, so damage on disk is never hidden from a new operation; what it
// saves is the decompression, the larger part of a member read.
type groupCache struct {
	mu    sync.Mutex
	byKey map[groupKey]*list.Element // of *groupCacheEntry
	order list.List                  // least recently used first
}

type groupCacheEntry struct {
	key groupKey
	g   *groupReader
}

// get returns the cached reader of the group record at key whose header
// is h, or nil, and drops the least recently used others while the
// readers hold more than groupCacheBytes.
func (c *groupCache) get(key groupKey, h recordHeader) *groupReader {
	c.mu.Lock()
	defer c.mu.Unlock()
	el := c.byKey[key]
	if el == nil || el.Value.(*groupCacheEntry).g.h != h {
		return nil
	}
	c.order.MoveToBack(el)
	g := el.Value.(*groupCacheEntry).g
	c.trimLocked(g)
	return g
}

// put caches the reader of a group, in place of any other of the same
// record, and drops the least recently used readers while the others
// hold more than groupCacheBytes.
func (c *groupCache) put(key groupKey, g *groupReader) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey == nil {
		c.byKey = map[groupKey]*list.Element{}
	}
	if el := c.byKey[key]; el != nil {
		c.order.Remove(el)
	}
	c.byKey[key] = c.order.PushBack(&groupCacheEntry{key: key, g: g})
	c.trimLocked(g)
}

// trimLocked drops the least recently used readers other than keep while
// the readers hold more than groupCacheBytes. A cached reader grows as
// reads decode more of its frames, so it runs whenever a reader is taken
// as well as added: what the readers hold exceeds the bound by at most
// what they decoded since the cache was last used.
func (c *groupCache) trimLocked(keep *groupReader) {
	var total int64
	for el := c.order.Back(); el != nil; {
		e := el.Value.(*groupCacheEntry)
		prev := el.Prev()
		if total += e.g.held(); total > groupCacheBytes && e.g != keep {
			c.order.Remove(el)
			delete(c.byKey, e.key)
		}
		el = prev
	}
}

// drop forgets g, the reader of the record at key, if it is cached: a
// read found it stale.
func (c *groupCache) drop(key groupKey, g *groupReader) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el := c.byKey[key]; el != nil && el.Value.(*groupCacheEntry).g == g {
		c.order.Remove(el)
		delete(c.byKey, key)
	}
}

// held is how many bytes g holds: the stored frames it fetched and what
// it decoded of them (a raw frame's decoded bytes are its stored ones).
func (g *groupReader) held() int64 {
	var n int64
	for _, f := range g.frames {
		n += f.stored.Load()
		if !f.raw {
			n += int64(len(f.decoded()))
		}
	}
	return n
}

// errCacheStale: a frame a read used differs from the same frame in the
// cached reader, which the read then drops.
var errCacheStale = errors.New("cached group differs from its record")

// check compares the stored bytes of frame i, when an earlier read
// fetched them, with the record's on disk, which src reads. The error is
// a readFailure (errCacheStale when they differ) or a reason for a
// CorruptError.
func (r *frameReads) check(i int) error {
	f := r.g.frames[i]
	f.mu.Lock()
	held := f.src
	f.mu.Unlock()
	if held == nil {
		return nil // this read fetches it
	}
	disk, err := r.src.bytes(f.off, int(f.n))
	switch {
	case err != nil:
		return err
	case !bytes.Equal(disk, held):
		return &readFailure{errCacheStale}
	}
	return nil
}
