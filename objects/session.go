package objects

import (
	"bytes"
	"errors"
	"io"
	"slices"
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
// than once per file. It shares the readers with the Store (groupCache):
// a group the store or an earlier session decoded is not decoded again,
// but each of its frames is checked against the disk before the session
// first uses it. Every content it returns is verified against its id as
// the Store's are; what it does not promise is to see damage done to a
// group record on disk after it read that record, nor damage to a record
// whose content the Store keeps in memory (recent.go: both versions of the
// files last stored as deltas, hashed again on each use). A ReadSession is safe
// for concurrent use; drop it when the operation that needed it ends.
type ReadSession struct {
	s      *Store
	shared bool // takes and gives the Store's group readers, takes its recent contents (not a SweepSession)
	mu     sync.Mutex
	// groups holds the readers of the group records read, oldest first
	// in order.
	groups map[groupKey]sessionGroup
	order  []groupKey
	// loading holds, for each record being loaded, a channel closed when
	// its load ends.
	loading map[groupKey]chan struct{}
	// located holds the locators given by Locate; read only after it.
	located map[ID]Locator
}

// ReadSession starts a read session on the store.
func (s *Store) ReadSession() *ReadSession { return s.newSession(true) }

// SweepSession starts a read session for an operation that reads much of
// the store once (verify, a rewrite of packs): it neither takes the group
// readers the Store keeps nor gives it its own, which would only push out
// the groups that everyday reads share, and it reads every record it uses
// from disk, never taking a content the Store keeps in memory (recent.go).
func (s *Store) SweepSession() *ReadSession { return s.newSession(false) }

func (s *Store) newSession(shared bool) *ReadSession {
	return &ReadSession{s: s, shared: shared, groups: map[groupKey]sessionGroup{}, loading: map[groupKey]chan struct{}{}}
}

// sessionGroup is a session's reader of one group record.
type sessionGroup struct {
	g *groupReader
	// checked is nil for a reader the session made, which trusts what it
	// fetched; for one it took from the Store's cache, the frames the
	// session has checked against the disk.
	checked verified
}

// Open is Store.Open through the session.
func (r *ReadSession) Open(id ID) (io.ReadCloser, int64, error) {
	return r.s.open(id, r.stat, r.content)
}

// Get is Store.Get through the session.
func (r *ReadSession) Get(id ID) ([]byte, error) { return r.s.get(id, r.stat, r.content) }

// Locate gives the session where blobs are stored, looked up together
// before its reads (a restore of many files makes one pass of the index
// in id order rather than a lookup per file); Open and Get locate the
// other blobs as the Store does. Call it before the session's first read.
// A locator given here is trusted as the session trusts the group records
// it read: a blob moved meanwhile (a rewrite of its pack) fails its read,
// never returns other content, since every content is checked against
// its id.
func (r *ReadSession) Locate(locs map[ID]Locator) { r.located = locs }

// stat is Store.Stat, answered from Locate's locators when given.
func (r *ReadSession) stat(id ID) (Locator, error) {
	if loc, ok := r.located[id]; ok {
		return loc, nil
	}
	return r.s.Stat(id)
}

// content reads blob id, not chunked, at loc: from the Store's recent
// contents when it keeps id's (not for a SweepSession), else a group member, and the base of a
// delta that is one, through the session's groups, anything else as the
// store does.
func (r *ReadSession) content(loc Locator, id ID) ([]byte, error) {
	if r.shared { // a SweepSession reads every record from disk
		if data, ok := r.s.recentContent(id); ok {
			return data, nil
		}
	}
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
	var h recordHeader
	var content []byte
	err := r.through(loc, src, corrupt, func(sg sessionGroup) (err error) {
		h, content, err = sg.g.member(r.s.codec, src, sg.checked, loc, want, corrupt)
		return err
	})
	return h, content, err
}

// CheckGroup checks the group record at loc (the locator of any of its
// members) whole against the group's id, dead members and all, as a fetch
// of the record from a remote will: a member read checks only the
// member. It uses what was decoded of the record, by the session or by the
// Store (checked against the disk, as a member read does). Damage is a
// *CorruptError.
func (r *ReadSession) CheckGroup(loc Locator) error {
	corrupt := r.s.recordCorrupt(loc, ID{})
	src := r.s.payload(loc)
	defer src.close()
	return r.through(loc, src, corrupt, func(sg sessionGroup) error {
		_, err := sg.g.whole(r.s.codec, src, sg.checked, corrupt)
		return err
	})
}

// through calls read with the session's reader of the group record at loc
// (see loaded), and again with a fresh one as long as read finds the one
// it took from the Store's cache stale.
func (r *ReadSession) through(loc Locator, src *packPayload, corrupt func(string) error, read func(sessionGroup) error) error {
	for {
		sg, err := r.loaded(loc, src, corrupt)
		if err != nil {
			return err
		}
		if err := read(sg); !r.stale(loc, sg, err) {
			return err
		}
	}
}

// stale reports whether err says that sg, a reader the session took from
// the Store's cache, no longer holds what the disk does; it then forgets
// the reader, here and in the cache, so that the next load reads the
// record afresh.
func (r *ReadSession) stale(loc Locator, sg sessionGroup, err error) bool {
	if !errors.Is(err, errCacheStale) {
		return false
	}
	key := groupKey{loc.Pack, loc.Offset}
	r.s.groups.drop(key, sg.g)
	r.mu.Lock()
	if r.groups[key].g == sg.g {
		delete(r.groups, key)
		// The reader that replaces it takes a fresh place in the order.
		r.order = slices.DeleteFunc(r.order, func(k groupKey) bool { return k == key })
	}
	r.mu.Unlock()
	return true
}

// loaded returns the session's reader of the group record at loc. The
// first time, it reads the record's header through src and takes the
// Store's reader of the record, or else indexes the record's frames and
// gives the Store the new reader. Readers of a record being loaded wait
// for that load instead of loading it again; when it fails, each tries
// its own.
func (r *ReadSession) loaded(loc Locator, src *packPayload, corrupt func(string) error) (sessionGroup, error) {
	key := groupKey{loc.Pack, loc.Offset}
	for {
		r.mu.Lock()
		if sg, ok := r.groups[key]; ok {
			r.mu.Unlock()
			return sg, nil
		}
		wait := r.loading[key]
		if wait == nil {
			done := make(chan struct{})
			r.loading[key] = done
			r.mu.Unlock()
			sg, err := r.load(key, loc, src, corrupt)
			if err == nil {
				r.keep(key, sg)
			}
			r.mu.Lock()
			delete(r.loading, key)
			r.mu.Unlock()
			close(done)
			return sg, err
		}
		r.mu.Unlock()
		<-wait
	}
}

// load makes the session's reader of the group record at key (see loaded);
// a SweepSession's is always its own.
func (r *ReadSession) load(key groupKey, loc Locator, src *packPayload, corrupt func(string) error) (sessionGroup, error) {
	h, err := groupHeader(loc, src, corrupt)
	if err != nil {
		return sessionGroup{}, err
	}
	if r.shared {
		if g := r.s.groups.get(key, h); g != nil {
			return sessionGroup{g: g, checked: g.verify()}, nil
		}
	}
	g, err := newGroupReader(h, src)
	if err != nil {
		return sessionGroup{}, damage(err, corrupt)
	}
	if r.shared {
		r.s.groups.put(key, g)
	}
	return sessionGroup{g: g}, nil
}

// keep records the reader of a group, dropping the oldest group beyond
// sessionGroups.
func (r *ReadSession) keep(key groupKey, sg sessionGroup) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.groups[key] = sg
	r.order = append(r.order, key)
	if len(r.order) > sessionGroups {
		delete(r.groups, r.order[0])
		r.order = r.order[1:]
	}
}
