package objects

import (
	"bytes"
	"io"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ckpt/ckpt/internal/storefs"
)

// A session returns every member verified, and concurrently.
func TestReadSessionReadsEveryMember(t *testing.T) {
	s, idx := testStore(t, Options{Groups: true})
	blobs := groupBlobs()
	ids, _ := save(t, s, idx, blobs...)
	r := s.ReadSession()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < len(ids); i += 4 {
				rc, n, err := r.Open(ids[i])
				if err != nil {
					t.Error(err)
					return
				}
				got, _ := io.ReadAll(rc)
				if n != int64(len(blobs[i])) || string(got) != string(blobs[i]) {
					t.Errorf("blob %d: wrong content", i)
				}
				if got, err := r.Get(ids[i]); err != nil || string(got) != string(blobs[i]) {
					t.Errorf("blob %d: Get: %v", i, err)
				}
			}
		})
	}
	wg.Wait()
}

// A session reads each frame of a group record once: damage done after
// its reads fetched every frame is not seen by the session, which keeps
// returning the verified content, while the store and a new session
// report it for the members it reaches and return no wrong bytes.
func TestReadSessionReadsAGroupOnce(t *testing.T) {
	s, idx := testStore(t, Options{Groups: true})
	blobs := groupBlobs()[:50]
	ids, _ := save(t, s, idx, blobs...)
	loc, _ := s.Stat(ids[7])
	r := s.ReadSession()
	for i, id := range ids {
		if got, err := r.Get(id); err != nil || string(got) != string(blobs[i]) {
			t.Fatalf("member %d before the damage: %v", i, err)
		}
	}
	flip(t, s.PackPath(loc.Pack), loc.Offset+int64(loc.Length)/2)
	for i, id := range ids {
		if got, err := r.Get(id); err != nil || string(got) != string(blobs[i]) {
			t.Fatalf("member %d after the damage, same session: %v", i, err)
		}
	}
	for name, get := range map[string]func(ID) ([]byte, error){"store": s.Get, "new session": s.ReadSession().Get} {
		damaged := 0
		for i, id := range ids {
			got, err := get(id)
			if err != nil {
				mustCorrupt(t, err)
				damaged++
			} else if string(got) != string(blobs[i]) {
				t.Fatalf("%s: member %d read back wrong bytes", name, i)
			}
		}
		if damaged == 0 {
			t.Fatalf("%s: no member of the damaged group reads as corrupt", name)
		}
	}
}

// A session reads the bases of deltas through its groups as well: damage
// done to a base's group record after the session read one delta on it is
// not seen by the session's read of another delta on that group, while the
// store, which reads the record again, reports it.
func TestReadSessionReadsDeltaBasesThroughItsGroups(t *testing.T) {
	s, idx := testStore(t, Options{Groups: true})
	bases := [][]byte{textBytes(1, 20<<10), textBytes(2, 20<<10)}
	baseIDs, _ := save(t, s, idx, bases...)
	var ids []ID
	var versions [][]byte
	for i, base := range bases {
		v := edited(base, i)
		id, loc := saveVersion(t, s, idx, v, baseIDs[i])
		if !loc.Delta() {
			t.Fatalf("version %d is not stored as a delta: %+v", i, loc)
		}
		ids, versions = append(ids, id), append(versions, v)
	}
	r := s.ReadSession()
	if got, err := r.Get(ids[0]); err != nil || !bytes.Equal(got, versions[0]) {
		t.Fatalf("first delta through the session: %v", err)
	}
	loc, _ := s.Stat(baseIDs[1])
	flip(t, s.PackPath(loc.Pack), loc.Offset+int64(loc.Length)/2)
	if got, err := r.Get(ids[1]); err != nil || !bytes.Equal(got, versions[1]) {
		t.Fatalf("second delta through the session, after the damage: %v", err)
	}
	_, err := s.Get(ids[1])
	mustCorrupt(t, err)
}

// Readers that reach a group record while it is being loaded wait for that
// load, and readers of one frame for the read fetching it: many readers of
// one group, all starting at once, read from its pack what one reader
// reading every member in turn reads.
func TestReadSessionLoadsAGroupOnceForConcurrentReaders(t *testing.T) {
	var reads atomic.Int64
	s, idx := testStore(t, Options{Groups: true, FS: countingFS{FS: storefs.OS, reads: &reads}})
	blobs := groupBlobs()[:16]
	ids, _ := save(t, s, idx, blobs...)
	mustGet(t, s, ids[0], blobs[0]) // the pack opened, its header read
	reads.Store(0)
	r := s.ReadSession()
	for i, id := range ids {
		mustRead(t, r, id, blobs[i])
	}
	inTurn := reads.Swap(0)
	r = s.ReadSession()
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			<-start
			mustRead(t, r, id, blobs[i])
		})
	}
	close(start)
	wg.Wait()
	if n := reads.Load(); n != inTurn {
		t.Fatalf("%d readers of one group read its pack %d times, one reading every member in turn %d", len(ids), n, inTurn)
	}
}

// mustRead reads blob id through r and checks it holds want.
func mustRead(t *testing.T, r *ReadSession, id ID, want []byte) {
	t.Helper()
	if got, err := r.Get(id); err != nil || !bytes.Equal(got, want) {
		t.Errorf("blob %s: %v", id.Short(), err)
	}
}

// A reader the session drops as stale leaves the session's order with it:
// the reader that replaces it stays for a full sessionGroups of later
// groups, not evicted in the place of the one it replaced.
func TestReadSessionKeepsAReplacedReaderItsFullTurn(t *testing.T) {
	s, _ := testStore(t, Options{Groups: true})
	r := s.ReadSession()
	key := func(i int) groupKey { return groupKey{pack: 1, offset: int64(i)} }
	old := sessionGroup{g: &groupReader{}}
	r.keep(key(0), old)
	if !r.stale(Locator{Pack: 1, Offset: 0}, old, &readFailure{errCacheStale}) {
		t.Fatal("a stale read was not recognised")
	}
	renewed := sessionGroup{g: &groupReader{}}
	r.keep(key(0), renewed)
	for i := 1; i < sessionGroups; i++ {
		r.keep(key(i), sessionGroup{g: &groupReader{}})
	}
	if got := r.groups[key(0)].g; got != renewed.g {
		t.Fatalf("the replacing reader was evicted after %d later groups, within the session's %d", sessionGroups-1, sessionGroups)
	}
}

// A session reads a blob where Locate says it is, and finds the others as
// the Store does; a locator that names another blob's place yields an
// error, never that blob's bytes.
func TestReadSessionReadsWhereLocateSays(t *testing.T) {
	s, idx := testStore(t, Options{Groups: true})
	blobs := groupBlobs()[:20]
	ids, _ := save(t, s, idx, blobs...)
	locs := map[ID]Locator{}
	for _, id := range ids[:10] {
		loc, err := s.Stat(id)
		if err != nil {
			t.Fatal(err)
		}
		locs[id] = loc
	}
	r := s.ReadSession()
	r.Locate(locs)
	for i, id := range ids {
		if got, err := r.Get(id); err != nil || string(got) != string(blobs[i]) {
			t.Fatalf("blob %d: %v", i, err)
		}
	}
	wrong := s.ReadSession()
	wrong.Locate(map[ID]Locator{ids[0]: locs[ids[1]]})
	if got, err := wrong.Get(ids[0]); err == nil {
		t.Fatalf("a blob read at another's locator returned %q", got)
	}
	if _, _, err := wrong.Open(ids[0]); err == nil {
		t.Fatal("a blob opened at another's locator opened")
	}
}
