package engine

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"io"
	"sync"

	"github.com/ckpt/ckpt/engine/internal/remotesync"
	"github.com/ckpt/ckpt/engine/internal/restore"
	"github.com/ckpt/ckpt/objects"
)

// arrivalsHeld bounds the contents a streamed fetch holds for the writes
// that have not yet read them: the fetch waits to start its next read
// while more is held, unless a write waits for a blob still to come. A
// group member may share its group's decoded payload, but only when the
// members one record brings hold half of it
// (objects.Batch.PutDecodedRecord): on arrival, what is held keeps at
// most twice its length alive (later, a member written first no longer
// counts while the payload stays for the others).
// Small, so that a content is written while the processor's caches still
// hold it: with 64 MiB a clone of 90,000 files took 15–30% more CPU time
// than with 8, in copies and page faults.
const arrivalsHeld = 8 << 20

// arrivals is what a restore reads while a fetch brings its blobs
// (Syncer.Stream): a blob's content from the moment it arrives until the
// last write that reads it has it, any other blob from the store, and a
// blob still to come once the fetch has ended and committed it. A read of
// a blob still to come waits for it; a fetch that fails fails the reads
// still waiting.
type arrivals struct {
	local restore.Blobs // the store's, for what does not come
	bound int64         // arrivalsHeld, but in tests

	mu      sync.Mutex
	changed *sync.Cond
	uses    map[objects.ID]int    // the blobs to come, and the writes yet to read each
	got     map[objects.ID][]byte // arrived and not yet read by every write of it
	held    int64                 // bytes in got
	waiting int                   // reads waiting for a blob to come
	ended   bool                  // the fetch ended: what did not arrive is in the store
	closed  bool                  // the writes ended: nothing more is kept
	err     error                 // the fetch's failure
}

// newArrivals returns the arrivals of the blobs order names (in the
// order they come), each read by uses[id] writes, with local for every
// other blob.
func newArrivals(local restore.Blobs, bound int64, order []objects.ID, uses map[objects.ID]int) *arrivals {
	a := &arrivals{local: local, bound: bound, uses: make(map[objects.ID]int, len(order)), got: map[objects.ID][]byte{}}
	a.changed = sync.NewCond(&a.mu)
	for _, id := range order {
		a.uses[id] = uses[id]
	}
	return a
}

// Open is restore.Blobs's Open.
func (a *arrivals) Open(id objects.ID) (io.ReadCloser, int64, error) {
	data, ok, err := a.take(id)
	if err != nil || !ok {
		if err == nil {
			return a.local.Open(id)
		}
		return nil, 0, err
	}
	return io.NopCloser(bytes.NewReader(data)), int64(len(data)), nil
}

// Get is restore.Blobs's Get.
func (a *arrivals) Get(id objects.ID) ([]byte, error) {
	data, ok, err := a.take(id)
	if err != nil || ok {
		return data, err
	}
	return a.local.Get(id)
}

// take returns blob id's content for one of its writes, waiting for it
// when it is still to come; ok is false when the store is to be read.
func (a *arrivals) take(id objects.ID) (data []byte, ok bool, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, coming := a.uses[id]; !coming {
		return nil, false, nil
	}
	for {
		if data, ok := a.got[id]; ok {
			if a.uses[id]--; a.uses[id] <= 0 {
				delete(a.got, id)
				a.held -= int64(len(data))
				a.changed.Broadcast()
			}
			return data, true, nil
		}
		if a.err != nil {
			return nil, false, a.err
		}
		if a.ended {
			return nil, false, nil
		}
		a.waiting++
		a.changed.Broadcast()
		a.changed.Wait()
		a.waiting--
	}
}

// arrive keeps content, which a fetch verified as blob id's, for the
// writes that read it.
func (a *arrivals) arrive(id objects.ID, content []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed || a.uses[id] <= 0 {
		return
	}
	a.got[id] = content
	a.held += int64(len(content))
	a.changed.Broadcast()
}

// room waits while the contents held exceed the bound, no write waits
// for a blob and the writes go on; it fails when ctx ends. It never
// waits for ever: the fetch starts its reads in the order the writes
// take the blobs, so while it waits every blob held or in flight comes
// before the next read's, and the writes, which start in that order too,
// either take them (freeing room), or wait for a blob to come (then room
// returns), or end (close: room returns).
func (a *arrivals) room(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		a.mu.Lock()
		a.changed.Broadcast()
		a.mu.Unlock()
	})
	defer stop()
	a.mu.Lock()
	defer a.mu.Unlock()
	for a.full() && ctx.Err() == nil {
		a.changed.Wait()
	}
	return ctx.Err()
}

// full reports whether the fetch is to wait (see room); a.mu is held.
func (a *arrivals) full() bool { return a.held > a.bound && a.waiting == 0 && !a.closed }

// end records that the fetch ended, with err when it failed.
func (a *arrivals) end(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ended, a.err = true, err
	a.changed.Broadcast()
}

// close records that the writes ended: what arrives from now on is not kept.
func (a *arrivals) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	clear(a.got)
	a.held = 0
	a.changed.Broadcast()
}

// streamedFetch is a fetch from one remote running beside the restore
// that reads its blobs through arrivals.
type streamedFetch struct {
	arrivals *arrivals
	coming   map[objects.ID]int // the blobs it brings, and their places in its order
	cancel   context.CancelFunc
	done     chan struct{}
	result   remotesync.FetchResult
	err      error
}

// streamBlobs starts fetching from remote name those of blobs (each read
// by uses[id] writes) that the store lacks and the remote holds, and orders plan's
// writes as they will come; the writes read them through the returned
// fetch's arrivals (local for the rest). It returns nil when there is
// nothing to fetch from name; the blobs no remote holds are left for the
// reads to report, other remotes are fetched from first, as fetchBlobs
// does. held is told where the store holds the blobs it holds
// (fetchLocating).
func (e *Engine) streamBlobs(ctx context.Context, name string, plan *restore.Plan, blobs []objects.ID, uses map[objects.ID]int, local restore.Blobs, held func(objects.ID, objects.Locator)) (*streamedFetch, FetchedBlobs, error) {
	s := e.syncer(name, nil, nil)
	wants, rest, err := s.Wanted(blobs, held)
	if err != nil {
		return nil, FetchedBlobs{}, err
	}
	others, err := e.fetchBlobs(ctx, rest, nil)
	if err != nil || wants.Len() == 0 {
		return nil, others, err
	}
	release, err := e.connectFetch(ctx, s)
	if err != nil {
		return nil, others, err
	}
	order := wants.Order()
	places := make(map[objects.ID]int, len(order))
	for i, id := range order {
		places[id] = i
	}
	plan.OrderWrites(func(id objects.ID) int {
		if r, ok := places[id]; ok {
			return r
		}
		return -1 // in the store: written first
	})
	a := newArrivals(local, cmp.Or(e.opts.hooks.arrivalsHeld, arrivalsHeld), order, uses)
	fctx, cancel := context.WithCancel(ctx)
	f := &streamedFetch{arrivals: a, coming: places, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		f.result, f.err = s.Stream(fctx, wants, a.room, a.arrive)
		f.err = errors.Join(f.err, release())
		if f.err != nil {
			f.err = fetchError(f.err, name)
		}
		a.end(f.err)
	}()
	return f, others, nil
}

// brings reports whether f, unless nil, brings blob id.
func (f *streamedFetch) brings(id objects.ID) bool {
	if f == nil {
		return false
	}
	_, ok := f.coming[id]
	return ok
}

// finish ends the fetch once the restore's writes have ended (with
// applyErr when they failed, which cancels it) and returns what it
// fetched and the restore's error: applyErr, else the fetch's own.
func (f *streamedFetch) finish(applyErr error) (remotesync.FetchResult, error) {
	f.arrivals.close()
	if applyErr != nil {
		f.cancel()
	}
	<-f.done
	f.cancel()
	if applyErr != nil {
		return f.result, applyErr
	}
	return f.result, f.err
}
