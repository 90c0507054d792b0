package objects

import (
	"sync/atomic"
	"testing"

	"github.com/ckpt/ckpt/objects/internal/pack"
)

// A session takes the readers the store decoded: a member the store read
// is read again by a new session without decoding anything, and a session
// publishes its readers, so that the next session decodes nothing either.
func TestReadSessionTakesTheStoresDecodedGroups(t *testing.T) {
	s, idx := testStore(t, Options{Groups: true})
	blobs := groupBlobs()
	ids, _ := save(t, s, idx, blobs...)
	mustGet(t, s, ids[20], blobs[20]) // the store decodes up to member 20
	loc, _ := s.Stat(ids[20])
	key := groupKey{loc.Pack, loc.Offset}
	s.groups.mu.Lock()
	g := s.groups.byKey[key].Value.(*groupCacheEntry).g
	s.groups.mu.Unlock()
	var decodes atomic.Int64
	g.decoding = func(int) { decodes.Add(1) }
	for i := range 21 {
		mustRead(t, s.ReadSession(), ids[i], blobs[i])
	}
	if n := decodes.Load(); n != 0 {
		t.Fatalf("sessions decoded %d frames of a group the store had decoded", n)
	}

	// A group a session reads first is the store's next.
	last := -1
	var other Locator
	for i, id := range ids {
		if l, _ := s.Stat(id); l.Flags&pack.FlagGroup != 0 && len(blobs[i]) > 0 && (l.Pack != loc.Pack || l.Offset != loc.Offset) {
			last, other = i, l
		}
	}
	if last < 0 {
		t.Fatal("the fixture's blobs are in one group")
	}
	mustRead(t, s.ReadSession(), ids[last], blobs[last])
	s.groups.mu.Lock()
	el := s.groups.byKey[groupKey{other.Pack, other.Offset}]
	s.groups.mu.Unlock()
	if el == nil {
		t.Fatal("the session's reader is not the store's")
	}
	el.Value.(*groupCacheEntry).g.decoding = func(int) { decodes.Add(1) }
	mustGet(t, s, ids[last], blobs[last])
	mustRead(t, s.ReadSession(), ids[last], blobs[last])
	if n := decodes.Load(); n != 0 {
		t.Fatalf("the store and a later session decoded %d frames a session had decoded", n)
	}
}

// The cache drops the least recently used readers once the ones it keeps
// hold more than groupCacheBytes, also when a kept one grew, the newest
// kept whatever its size.
func TestGroupCacheStaysWithinItsBudget(t *testing.T) {
	reader := func(n int64) *groupReader {
		f := &groupFrame{raw: true}
		f.stored.Store(n)
		return &groupReader{frames: []*groupFrame{f}}
	}
	var c groupCache
	const each = groupCacheBytes / 10
	for i := range 30 {
		c.put(groupKey{1, int64(i)}, reader(each))
		switch i {
		case 8: // reader 0 used again: more recent than 1 to 8
			if c.get(groupKey{1, 0}, recordHeader{}) == nil {
				t.Fatal("reader 0 dropped within the budget")
			}
		case 10: // one over the budget: the least recently used goes
			if c.byKey[groupKey{1, 0}] == nil || c.byKey[groupKey{1, 1}] != nil {
				t.Fatal("the cache dropped another reader than the least recently used")
			}
		}
		var total int64
		for _, el := range c.byKey {
			total += el.Value.(*groupCacheEntry).g.held()
		}
		if total > groupCacheBytes {
			t.Fatalf("after %d readers the cache holds %d bytes, over %d", i+1, total, groupCacheBytes)
		}
	}
	if len(c.byKey) != 10 || c.order.Len() != 10 {
		t.Fatalf("the cache keeps %d readers (%d in order), want the last 10", len(c.byKey), c.order.Len())
	}
	for i := range 30 {
		kept := c.get(groupKey{1, int64(i)}, recordHeader{}) != nil
		if kept != (i >= 20) {
			t.Errorf("reader %d kept: %v", i, kept)
		}
	}
	// A reader decodes more after the cache took it: the next use of the
	// cache drops the least recently used others to stay within budget.
	c.get(groupKey{1, 20}, recordHeader{}).frames[0].stored.Add(each)
	if c.get(groupKey{1, 29}, recordHeader{}) == nil || c.byKey[groupKey{1, 21}] != nil || c.byKey[groupKey{1, 20}] == nil {
		t.Errorf("after reader 20 grew, kept 21: %v, 20: %v; want 21 dropped", c.byKey[groupKey{1, 21}] != nil, c.byKey[groupKey{1, 20}] != nil)
	}
	huge := reader(2 * groupCacheBytes)
	c.put(groupKey{2, 0}, huge)
	if c.get(groupKey{2, 0}, recordHeader{}) != huge || len(c.byKey) != 1 {
		t.Errorf("a reader over the budget: kept %v with %d others", c.get(groupKey{2, 0}, recordHeader{}) == huge, len(c.byKey)-1)
	}
	c.drop(groupKey{2, 0}, reader(1)) // not the cached reader: kept
	c.drop(groupKey{2, 0}, huge)
	if len(c.byKey) != 0 || c.order.Len() != 0 {
		t.Errorf("after drop the cache keeps %d readers", len(c.byKey))
	}
}

// A SweepSession reads past the Store's cache: it decodes what it reads
// itself, whatever the cache holds, and leaves the cache as it was.
func TestSweepSessionLeavesTheCacheAlone(t *testing.T) {
	s, idx := testStore(t, Options{Groups: true})
	blobs := groupBlobs()
	ids, _ := save(t, s, idx, blobs...)
	mustGet(t, s, ids[0], blobs[0])
	loc, _ := s.Stat(ids[0])
	s.groups.mu.Lock()
	g := s.groups.byKey[groupKey{loc.Pack, loc.Offset}].Value.(*groupCacheEntry).g
	before := len(s.groups.byKey)
	s.groups.mu.Unlock()
	var decodes atomic.Int64
	g.decoding = func(int) { decodes.Add(1) }
	sweep := s.SweepSession()
	for i, id := range ids {
		mustRead(t, sweep, id, blobs[i])
	}
	s.groups.mu.Lock()
	after := len(s.groups.byKey)
	s.groups.mu.Unlock()
	if decodes.Load() != 0 || after != before {
		t.Errorf("a sweep used the cached reader (%d decodes) or changed the cache (%d readers, then %d)", decodes.Load(), before, after)
	}
}

// WarmBase leaves a base decoded in the store's cache, so that storing the
// next version of its file as a delta decodes nothing; a blob no version
// is stored against (too small to be a base) is not read.
func TestWarmBaseSparesTheSaveTheDecoding(t *testing.T) {
	s, idx := testStore(t, Options{Groups: true})
	blobs := groupBlobs()
	ids, _ := save(t, s, idx, blobs...)
	cached := func(id ID) *groupReader {
		loc, err := s.Stat(id)
		if err != nil {
			t.Fatal(err)
		}
		s.groups.mu.Lock()
		defer s.groups.mu.Unlock()
		if el := s.groups.byKey[groupKey{loc.Pack, loc.Offset}]; el != nil {
			return el.Value.(*groupCacheEntry).g
		}
		return nil
	}
	tiny := ids[len(ids)-2] // the one-byte blob
	if read, err := s.WarmBase(tiny); read || err != nil {
		t.Fatalf("WarmBase of a blob too small to be a base = %v, %v", read, err)
	}
	if cached(tiny) != nil {
		t.Fatal("WarmBase read a blob too small to be a delta's base")
	}
	if read, err := s.WarmBase(Sum([]byte("never stored"))); read || err != nil {
		t.Fatalf("WarmBase of an unknown blob = %v, %v", read, err)
	}

	if read, err := s.WarmBase(ids[20]); !read || err != nil {
		t.Fatalf("WarmBase of a group member = %v, %v", read, err)
	}
	g := cached(ids[20])
	if g == nil {
		t.Fatal("WarmBase left nothing in the cache")
	}
	var decodes atomic.Int64
	g.decoding = func(int) { decodes.Add(1) }
	next := edited(blobs[20], 1)
	id, loc := saveVersion(t, s, idx, next, ids[20])
	if !loc.Delta() {
		t.Fatalf("the next version was stored whole: %+v", loc)
	}
	if n := decodes.Load(); n != 0 {
		t.Fatalf("storing the next version decoded %d frames of its warmed base", n)
	}
	mustGet(t, s, id, next)
}
