package objects

import (
	"bytes"
	"errors"
	"sync"
)

// groupCacheLen is how many group readers a Store keeps for the reads
// outside a session: a save's delta bases and a cat of several files read
// the members of one group one after another.
const groupCacheLen = 4

// groupCache keeps the readers of the last groups the Store read (see
// groupReader): the frames they fetched and what was decoded of them. A
// read through a cached reader still fetches from disk the record's
// header and the stored bytes of every frame it uses and goes on only
// when they are the bytes the reader holds, so damage on disk is never
// hidden; what it saves is the decompression, the larger part of a
// member read.
type groupCache struct {
	mu      sync.Mutex
	entries [groupCacheLen]groupCacheEntry
	next    int
}

type groupCacheEntry struct {
	pack   uint32
	offset int64
	g      *groupReader
}

// errCacheStale: a frame a read used differs from the same frame in the
// cached reader, which the read then drops.
var errCacheStale = errors.New("cached group differs from its record")

// get returns the cached reader of the group record at pack, offset whose
// header is h, or nil.
func (c *groupCache) get(pack uint32, offset int64, h recordHeader) *groupReader {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if e.g != nil && e.pack == pack && e.offset == offset && e.g.h == h {
			return e.g
		}
	}
	return nil
}

// put caches the reader of a group: in place of the entry of the same
// record, else of the oldest entry.
func (c *groupCache) put(pack uint32, offset int64, g *groupReader) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := groupCacheEntry{pack: pack, offset: offset, g: g}
	for i, old := range c.entries {
		if old.g != nil && old.pack == pack && old.offset == offset {
			c.entries[i] = e
			return
		}
	}
	c.entries[c.next] = e
	c.next = (c.next + 1) % groupCacheLen
}

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
