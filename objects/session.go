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
// decodes each group record once while the record stays among the last
// sessionGroups groups it read, instead of once per member: a restore of
// many small files reads each group from disk once rather than once per
// file. (The first read of a group decodes it up to that member; a read
// of a member past what was decoded decodes the group whole, once.) Every
// content it returns is verified against its id as the Store's are; what
// it does not promise is to see damage done to a group record on disk
// after it read that record. A ReadSession is safe for concurrent use;
// drop it when the operation that needed it ends.
type ReadSession struct {
	s  *Store
	mu sync.Mutex
	// groups holds what was decoded of each group record, oldest first
	// in order.
	groups map[groupKey]sessionGroup
	order  []groupKey
}

// ReadSession starts a read session on the store.
func (s *Store) ReadSession() *ReadSession {
	return &ReadSession{s: s, groups: map[groupKey]sessionGroup{}}
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
	g, err := r.loaded(loc, corrupt)
	if err != nil {
		return nil, err
	}
	if !g.holds(loc.Member) {
		p, err := r.s.groupThrough(g.h, g.stored, loc.Member, g.payload, corrupt)
		if err != nil {
			return nil, err
		}
		g.payload = p
		r.keep(key, g)
	}
	_, content, err := memberOf(g.payload, g.h.size, loc, id, corrupt)
	return bytes.Clone(content), err
}

// CheckGroup checks the group record at loc (the locator of any of its
// members) whole against the group's id, dead members and all, as a fetch
// of the record from a remote will: a member read checks only the
// member. It uses what the session decoded of the record. Damage is a
// *CorruptError.
func (r *ReadSession) CheckGroup(loc Locator) error {
	corrupt := r.s.recordCorrupt(loc, ID{})
	g, err := r.loaded(loc, corrupt)
	if err != nil {
		return err
	}
	if int64(len(g.payload)) != g.h.size {
		_, err := r.s.decodeGroup(g.h, g.stored, corrupt)
		return err
	}
	if Sum(g.payload) != g.h.id {
		return corrupt("group does not match its id")
	}
	return nil
}

// loaded returns what the session holds of the group record at loc, or
// the record loaded from disk with nothing decoded yet.
func (r *ReadSession) loaded(loc Locator, corrupt func(string) error) (sessionGroup, error) {
	r.mu.Lock()
	g, cached := r.groups[groupKey{loc.Pack, loc.Offset}]
	r.mu.Unlock()
	if cached {
		return g, nil
	}
	h, stored, err := r.s.loadRecord(loc, corrupt)
	return sessionGroup{h: h, stored: stored}, err
}

// sessionGroup is a group record a ReadSession loaded: its header, its
// payload as stored, and what was decoded of it, a prefix (the whole
// payload once a read needed more than the first decode held).
type sessionGroup struct {
	h       recordHeader
	stored  []byte
	payload []byte
}

// holds reports whether the decoded prefix holds member i whole.
func (g sessionGroup) holds(i uint32) bool {
	_, _, end, err := memberSpan(g.payload, g.h.size, i)
	return err == nil && end <= int64(len(g.payload))
}

// keep records what was decoded of a group, dropping the oldest group
// beyond sessionGroups.
func (r *ReadSession) keep(key groupKey, g sessionGroup) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.groups[key]; ok {
		if len(g.payload) > len(old.payload) {
			r.groups[key] = g
		}
		return
	}
	r.groups[key] = g
	r.order = append(r.order, key)
	if len(r.order) > sessionGroups {
		delete(r.groups, r.order[0])
		r.order = r.order[1:]
	}
}
