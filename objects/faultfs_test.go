package objects

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/ckpt/ckpt/internal/faultfs"
	"github.com/ckpt/ckpt/internal/storefs"
	"github.com/ckpt/ckpt/internal/testbound"
)

// faultErrnos are the failures every injection point is tried with.
var faultErrnos = []syscall.Errno{syscall.ENOSPC, syscall.EIO, syscall.EACCES}

// faultDeadline bounds one faulty run: a failure must end it, not hang it.
const faultDeadline = testbound.Hang

// faultStore is a store directory with a file-backed index stand-in: the
// blobs committed so far (content by id) survive every reopen.
type faultStore struct {
	t     *testing.T
	dir   string
	idx   *mapIndex
	blobs map[ID][]byte
	opts  Options
	// deferred: saves store raw and mark their packs (DeferCompression);
	// marked lists the packs a deferred save committed blobs to.
	deferred bool
	marked   map[uint32]bool
}

func newFaultStore(t *testing.T) *faultStore {
	// Small packs and pack buffers' worth of records so a run creates,
	// fills, syncs and rolls over several packs.
	return &faultStore{t: t, dir: t.TempDir(), idx: newMapIndex(), blobs: map[ID][]byte{},
		opts: Options{PackSize: 48 << 10, Writers: 1}}
}

// open opens the store over fsys (nil: the real file system).
func (f *faultStore) open(fsys vfs.FS) (*Store, error) {
	opts := f.opts
	opts.FS = fsys
	return Open(f.dir, f.idx, opts)
}

// put stores blobs in one batch and commits them once Sync succeeds.
func (f *faultStore) put(s *Store, blobs ...[]byte) error {
	return f.putVersions(s, blobs, nil)
}

// putVersions is put with blobs[i] a new version of prevs[i] (when there
// is one), which a delta record may store.
func (f *faultStore) putVersions(s *Store, blobs, prevs [][]byte) error {
	b := s.NewBatch()
	defer b.Close()
	if f.deferred {
		b.DeferCompression()
	}
	for i, data := range blobs {
		var prev ID
		if i < len(prevs) {
			prev = Sum(prevs[i])
		}
		if _, _, err := b.PutVersion(bytes.NewReader(data), prev); err != nil {
			return err
		}
	}
	ps, err := b.Sync()
	if err != nil {
		return err
	}
	f.commit(ps, blobs)
	return nil
}

func (f *faultStore) commit(ps []Placement, blobs [][]byte) {
	f.idx.commit(ps)
	for _, p := range ps {
		if f.deferred && f.marked == nil {
			f.marked = map[uint32]bool{}
		}
		if f.deferred {
			f.marked[p.Loc.Pack] = true
		}
	}
	for _, data := range blobs {
		f.blobs[Sum(data)] = data
	}
}

// check reopens the store on the real file system and asserts that every
// pack scans without error, every committed blob reads back exactly, and a
// further save appends cleanly after whatever the failure left.
func (f *faultStore) check(when string) {
	f.t.Helper()
	s, err := f.open(nil)
	if err != nil {
		f.t.Fatalf("%s: reopen: %v", when, err)
	}
	defer s.Close()
	packs, err := s.Packs()
	if err != nil {
		f.t.Fatalf("%s: %v", when, err)
	}
	for _, n := range packs {
		if err := s.ScanPack(n, func(ID, Locator) error { return nil }); err != nil {
			f.t.Fatalf("%s: scan pack %d: %v", when, n, err)
		}
	}
	for id, want := range f.blobs {
		got, err := s.Get(id)
		if err != nil || string(got) != string(want) {
			f.t.Fatalf("%s: committed blob %s: %d bytes, %v", when, id.Short(), len(got), err)
		}
	}
	deferred, err := s.DeferredPacks()
	if err != nil {
		f.t.Fatalf("%s: %v", when, err)
	}
	for n := range f.marked {
		if !slices.Contains(deferred, n) {
			f.t.Fatalf("%s: a deferred save committed blobs to pack %d, which is not marked (%v)", when, n, deferred)
		}
	}
	after := textBytes(uint64(len(f.blobs))+1000, 3000)
	if err := f.put(s, after); err != nil {
		f.t.Fatalf("%s: save after the failure: %v", when, err)
	}
	mustGet(f.t, s, Sum(after), after)
}

// runFaulty runs op over the real file system with the changes it makes
// (create, mkdir, write, sync, truncate, remove, directory sync) passed
// through h, a failed write tearing, within faultDeadline, and returns op's
// error.
func runFaulty(t *testing.T, f *faultStore, h *faultfs.Nth, op func(s *Store) error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		s, err := f.open(faultfs.Wrap(storefs.OS, h))
		if err != nil {
			done <- err
			return
		}
		err = op(s)
		s.Close()
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(faultDeadline):
		t.Fatalf("%v at call %d (%s): still running after %v", h.Errno, h.FailAt, h.Hit(), faultDeadline)
		return nil
	}
}

// faultSample is how many of an operation's injection points the fault
// suites fail without the long tests: each run sets up, saves into and
// checks a fresh store, about a second under -race.
const faultSample = 6

// sweepFaults counts the changes op makes to a fresh store, then fails
// each of them in turn (counted from 0), checking after each run that op
// reported the injected error (or, for the rare failure that loses
// nothing, succeeded) and that the store is intact. With the long tests
// on (testbound.LongEnv) every change fails with every errno of
// faultErrnos; otherwise an even sample of them (testbound.Spread) fails
// with the errnos in rotation. setup prepares a fresh store for each run.
// It returns the number of injection points op reaches.
func sweepFaults(t *testing.T, setup func(t *testing.T) *faultStore, op func(f *faultStore, s *Store) error) int {
	count := faultfs.Count()
	f := setup(t)
	if err := runFaulty(t, f, count, func(s *Store) error { return op(f, s) }); err != nil {
		t.Fatalf("run without a fault failed: %v", err)
	}
	n := count.Seen()
	sample := testbound.Spread(n, faultSample)
	for j, failAt := range sample {
		for i, errno := range faultErrnos {
			if !testbound.LongTests() && i != j%len(faultErrnos) {
				continue
			}
			f := setup(t)
			h := &faultfs.Nth{FailAt: failAt, Errno: errno}
			err := runFaulty(t, f, h, func(s *Store) error { return op(f, s) })
			if h.Hit() == "" {
				t.Fatalf("call %d of %d never happened (the run is not deterministic)", failAt, n)
			}
			when := fmt.Sprintf("%v at call %d (%s)", errno, failAt, h.Hit())
			if err != nil && !errors.Is(err, errno) {
				t.Fatalf("%s: error %v does not carry the cause", when, err)
			}
			f.check(when)
		}
	}
	t.Logf("%d injection points, %d of them failed", n, len(sample))
	return n
}

// faultBlobs are the contents a faulty save writes: text and random blobs
// of 1 to 20 KB, enough to fill and roll over a few 48 KiB packs.
func faultBlobs(seed uint64) [][]byte {
	var out [][]byte
	for i := range 12 {
		if i%2 == 0 {
			out = append(out, textBytes(seed*100+uint64(i), 1000+i*1500))
		} else {
			out = append(out, randomBytes(seed*100+uint64(i), 1000+i*1500))
		}
	}
	return out
}

// seededFaultStore is a fault store already holding one committed save,
// its newest pack ending in the zeroed tail a crash can leave (so the next
// writer truncates it).
func seededFaultStore(t *testing.T) *faultStore {
	f := newFaultStore(t)
	s, err := f.open(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := f.put(s, faultBlobs(1)...); err != nil {
		t.Fatal(err)
	}
	packs, err := s.Packs()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := os.OpenFile(s.PackPath(packs[len(packs)-1]), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	if _, err := pf.Write(make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestPutAndSyncFailuresLoseNothing fails the file-system calls of three
// saves in turn, with ENOSPC, EIO and EACCES (every call with the long
// tests, an even sample without; see sweepFaults): each failure must end
// the save with an error naming the cause, within a bounded time, and
// leave packs that scan cleanly with every blob synced before it readable.
func TestPutAndSyncFailuresLoseNothing(t *testing.T) {
	for _, tc := range []struct{ groups, deferred bool }{{false, false}, {true, false}, {true, true}} {
		t.Run(fmt.Sprintf("groups=%v,deferred=%v", tc.groups, tc.deferred), func(t *testing.T) {
			putAndSyncFailures(t, tc.groups, tc.deferred)
		})
	}
}

func putAndSyncFailures(t *testing.T, groups, deferred bool) {
	seeded := func(t *testing.T) *faultStore {
		f := seededFaultStore(t)
		f.opts.Groups, f.deferred = groups, deferred
		return f
	}
	// The third save edits the seeded blobs: delta records against
	// bases committed before the faults.
	seededBlobs := faultBlobs(1)
	var edits [][]byte
	for k, data := range seededBlobs {
		edits = append(edits, edited(data, k))
	}
	points := sweepFaults(t, seeded, func(f *faultStore, s *Store) error {
		if err := f.put(s, faultBlobs(2)...); err != nil {
			return err
		}
		if err := f.put(s, faultBlobs(3)...); err != nil {
			return err
		}
		return f.putVersions(s, edits, seededBlobs)
	})
	if points < 8 {
		t.Fatalf("the saves reached only %d injection points", points)
	}
}

// TestRewriteFailuresLoseNothing fails the file-system calls of a
// compaction in turn (every one with the long tests; see sweepFaults) (copy or regroup the live half of every pack, sync, commit,
// remove the old packs, then cut a dead tail off the newest pack): whatever
// fails, every committed blob stays readable.
func TestRewriteFailuresLoseNothing(t *testing.T) {
	setup := func(t *testing.T) *faultStore {
		f := seededFaultStore(t)
		s, err := f.open(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		// A dead tail: records appended to the newest pack, never committed.
		b := s.NewBatch()
		defer b.Close()
		for _, data := range faultBlobs(4)[:3] {
			if _, err := b.PutBytes(data); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := b.Sync(); err != nil {
			t.Fatal(err)
		}
		return f
	}
	points := sweepFaults(t, setup, compactAll)
	if points < 8 {
		t.Fatalf("the compaction reached only %d injection points", points)
	}
}

// compactAll rewrites every other committed blob into fresh packs (a
// quarter of them copied, a quarter recompressed, half regrouped into new
// group records), drops the rest from the index, removes the old packs and truncates the newest
// rewritten pack's unused tail (none: a no-op truncate still writes).
func compactAll(f *faultStore, s *Store) error {
	old, err := s.Packs()
	if err != nil {
		return err
	}
	var moves []Move
	keep := map[ID][]byte{}
	i := 0
	// In id order, so that every run makes the same calls.
	for _, id := range slices.SortedFunc(maps.Keys(f.blobs), CompareIDs) {
		data := f.blobs[id]
		i++
		if i%2 == 0 {
			continue
		}
		keep[id] = data
		loc, _, _ := f.idx.Locator(id)
		how := MoveCopy
		switch i % 4 {
		case 1:
			how = MoveRegroup
		case 3:
			how = MoveRecompress
		}
		moves = append(moves, Move{ID: id, Loc: loc, How: how})
	}
	moved, err := s.Rewrite(context.Background(), moves, nil)
	if err != nil {
		return err
	}
	var last uint32 // the newest pack the rewrite created
	for _, p := range moved {
		last = max(last, p.Loc.Pack)
	}
	// Commit: the index now names only the copies.
	f.idx.mu.Lock()
	f.idx.locs = map[ID]Locator{}
	f.idx.mu.Unlock()
	f.idx.commit(moved)
	f.blobs = keep
	for _, n := range old {
		if err := s.RemovePack(n); err != nil {
			return err
		}
	}
	var end int64
	for _, p := range moved {
		if p.Loc.Pack == last {
			end = max(end, p.Loc.Offset+int64(p.Loc.Length))
		}
	}
	return s.TruncatePack(last, end)
}
