package objects

import (
	"bytes"
	"io"
	"sync"
)

// sessionGroups is how many decoded groups a ReadSession keeps: its
// readers (a restore's parallel writers) each work through the members of
// a group or two at a time.
const sessionGroups = 16

// ReadSession reads blobs as the Store does, except that it loads and
// verifies each group record once while the record stays among the last
// sessionGroups groups it read, instead of once per member: a restore of
// many small files reads each group from disk once rather than once per
// file. Every content it returns is verified against its id as the
// Store's are; what it does not promise is to see damage done to a group
// record on disk after it read that record. A ReadSession is safe for
// concurrent use; drop it when the operation that needed it ends.
type ReadSession struct {
	s  *Store
	mu sync.Mutex
	// groups holds verified decoded payloads by record, oldest first in order.
	groups map[groupKey][]byte
	order  []groupKey
}

// ReadSession starts a read session on the store.
func (s *Store) ReadSession() *ReadSession {
	return &ReadSession{s: s, groups: map[groupKey][]byte{}}
}

// Open is Store.Open through the session.
func (r *ReadSession) Open(id ID) (io.ReadCloser, int64, error) { return r.s.open(id, r.content) }

// Get is Store.Get through the session.
func (r *ReadSession) Get(id ID) ([]byte, error) { return r.s.get(id, r.content) }

// content reads blob id, not chunked, at loc: a group member through the
// session's groups, anything else as the store does.
func (r *ReadSession) content(loc Locator, id ID) ([]byte, error) {
	if loc.Flags&FlagGroup == 0 {
		return r.s.content(loc, id)
	}
	return r.member(loc, id)
}

// member returns the verified content of id, member loc.Member of the
// group record at loc.
func (r *ReadSession) member(loc Locator, id ID) ([]byte, error) {
	corrupt := r.s.recordCorrupt(loc, id)
	key := groupKey{loc.Pack, loc.Offset}
	r.mu.Lock()
	p := r.groups[key]
	r.mu.Unlock()
	if p == nil {
		var err error
		if p, err = r.s.readGroup(loc, corrupt, func() (recordHeader, []byte, error) { return r.s.loadRecord(loc, corrupt) }); err != nil {
			return nil, err
		}
		r.keep(key, p)
	}
	_, content, err := memberOf(p, loc, id, corrupt)
	return bytes.Clone(content), err
}

// keep adds a verified group payload, dropping the oldest beyond
// sessionGroups.
func (r *ReadSession) keep(key groupKey, p []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.groups[key]; ok {
		return
	}
	r.groups[key] = p
	r.order = append(r.order, key)
	if len(r.order) > sessionGroups {
		delete(r.groups, r.order[0])
		r.order = r.order[1:]
	}
}
