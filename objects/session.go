package objects

import (
	"bytes"
	"io"
	"sync"

	"github.com/ckpt/ckpt/objects/internal/pack"
)

// sessionGroups is how many decoded groups a ReadSession keeps: its
// readers (a restore's parallel writers) each work through the members of
// a group or two at a time.
const sessionGroups = 16

// ReadSession reads blobs as the Store does, except that it reads each
// group record's header and frame index (a delta's base's included) once,
// and each of its frames from disk at most once and decodes it at most
// twice (up to a member, then whole), while the record stays among the
// last sessionGroups groups it read, instead of once per member: a
// restore of many small files reads each frame of a group once rather
// than once per file. Every content it returns is verified against its id as the
// Store's are; what it does not promise is to see damage done to a group
// record on disk after it read that record. A ReadSession is safe for
// concurrent use; drop it when the operation that needed it ends.
type ReadSession struct {
	s  *Store
	mu sync.Mutex
	// groups holds the readers of the group records read, oldest first
	// in order.
	groups map[groupKey]*groupReader
	order  []groupKey
	// loading holds, for each record being loaded, a channel closed when
	// its load ends.
	loading map[groupKey]chan struct{}
}

// ReadSession starts a read session on the store.
func (s *Store) ReadSession() *ReadSession {
	return &ReadSession{s: s, groups: map[groupKey]*groupReader{}, loading: map[groupKey]chan struct{}{}}
}

// Open is Store.Open through the session.
func (r *ReadSession) Open(id ID) (io.ReadCloser, int64, error) { return r.s.open(id, r.content) }

// Get is Store.Get through the session.
func (r *ReadSession) Get(id ID) ([]byte, error) { return r.s.get(id, r.content) }

// content reads blob id, not chunked, at loc: a group member, and the
// base of a delta that is one, through the session's groups, anything else
// as the store does.
func (r *ReadSession) content(loc Locator, id ID) ([]byte, error) {
	_, data, err := r.s.readVersion(loc, id, pack.MaxDeltaDepth, r)
	if loc.Flags&pack.FlagGroup != 0 {
		// A member is the session's own bytes: the caller owns what it gets.
		data = bytes.Clone(data)
	}
	return data, err
}

// member returns member loc.Member of the group record at loc, checked
// against want when not zero, as the session's own bytes. Damage is
// reported through corrupt.
func (r *ReadSession) member(loc Locator, want ID, corrupt func(string) error) (recordHeader, []byte, error) {
	src := r.s.payload(loc)
	defer src.close()
	g, err := r.loaded(loc, src, corrupt)
	if err != nil {
		return recordHeader{}, nil, err
	}
	return g.member(r.s.codec, src, false, loc, want, corrupt)
}

// CheckGroup checks the group record at loc (the locator of any of its
// members) whole against the group's id, dead members and all, as a fetch
// of the record from a remote will: a member read checks only the
// member. It uses what the session decoded of the record. Damage is a
// *CorruptError.
func (r *ReadSession) CheckGroup(loc Locator) error {
	corrupt := r.s.recordCorrupt(loc, ID{})
	src := r.s.payload(loc)
	defer src.close()
	g, err := r.loaded(loc, src, corrupt)
	if err != nil {
		return err
	}
	_, err = g.whole(r.s.codec, src, corrupt)
	return err
}

// loaded returns the session's reader of the group record at loc, reading
// the record's header and frame index through src the first time. Readers
// of a record being loaded wait for that load instead of loading it again;
// when it fails, each tries its own.
func (r *ReadSession) loaded(loc Locator, src *packPayload, corrupt func(string) error) (*groupReader, error) {
	key := groupKey{loc.Pack, loc.Offset}
	for {
		r.mu.Lock()
		if g := r.groups[key]; g != nil {
			r.mu.Unlock()
			return g, nil
		}
		wait := r.loading[key]
		if wait == nil {
			done := make(chan struct{})
			r.loading[key] = done
			r.mu.Unlock()
			g, err := groupReaderAt(loc, src, corrupt)
			if err == nil {
				r.keep(key, g)
			}
			r.mu.Lock()
			delete(r.loading, key)
			r.mu.Unlock()
			close(done)
			return g, err
		}
		r.mu.Unlock()
		<-wait
	}
}

// keep records the reader of a group, dropping the oldest group beyond
// sessionGroups.
func (r *ReadSession) keep(key groupKey, g *groupReader) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.groups[key] = g
	r.order = append(r.order, key)
	if len(r.order) > sessionGroups {
		delete(r.groups, r.order[0])
		r.order = r.order[1:]
	}
}
