package engine

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/ckpt/ckpt/objects"
)

// storedBlobs plays the store's read session: it holds some contents and
// counts the reads that reach it.
type storedBlobs struct {
	contents map[objects.ID][]byte
	reads    int
}

func (s *storedBlobs) Get(id objects.ID) ([]byte, error) {
	s.reads++
	if b, ok := s.contents[id]; ok {
		return b, nil
	}
	return nil, objects.ErrNotFound
}

func (s *storedBlobs) Open(id objects.ID) (io.ReadCloser, int64, error) {
	b, err := s.Get(id)
	if err != nil {
		return nil, 0, err
	}
	return io.NopCloser(bytes.NewReader(b)), int64(len(b)), nil
}

// readAll reads blob id through a's Open.
func readAll(a *arrivals, id objects.ID) ([]byte, error) {
	rc, _, err := a.Open(id)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// readLater starts a read of blob id through a, reporting on the returned
// channel once it has ended; it returns once the read waits.
func readLater(t *testing.T, a *arrivals, id objects.ID) <-chan error {
	t.Helper()
	a.mu.Lock()
	before := a.waiting
	a.mu.Unlock()
	done := make(chan error, 1)
	go func() {
		b, err := a.Get(id)
		if err == nil && string(b) != "content of "+string(id[:1]) {
			err = errors.New("read " + string(b))
		}
		done <- err
	}()
	a.mu.Lock()
	for a.waiting == before {
		a.changed.Wait()
	}
	a.mu.Unlock()
	return done
}

func arrivalID(c byte) objects.ID { return objects.ID{c} }

func arrivalContent(c byte) []byte { return []byte("content of " + string([]byte{c})) }

func TestArrivalsHandEachWriteItsBlobAsItComes(t *testing.T) {
	a1, a2, local := arrivalID('a'), arrivalID('b'), arrivalID('l')
	stored := &storedBlobs{contents: map[objects.ID][]byte{local: arrivalContent('l')}}
	a := newArrivals(stored, 1<<20, []objects.ID{a1, a2}, map[objects.ID]int{a1: 2, a2: 1, local: 1})

	if b, err := readAll(a, local); err != nil || !bytes.Equal(b, arrivalContent('l')) || stored.reads != 1 {
		t.Fatalf("a blob that does not come: %q %v after %d store reads; want it from the store at once", b, err, stored.reads)
	}
	first := readLater(t, a, a1)
	second := readLater(t, a, a1)
	a.arrive(a1, arrivalContent('a'))
	for _, done := range []<-chan error{first, second} {
		if err := <-done; err != nil {
			t.Fatalf("a write waiting for its blob: %v", err)
		}
	}
	if a.held != 0 || len(a.got) != 0 {
		t.Fatalf("after both writes of a blob read it, %d bytes (%d blobs) are still held", a.held, len(a.got))
	}
	a.arrive(a2, arrivalContent('b'))
	if a.held != int64(len(arrivalContent('b'))) {
		t.Fatalf("held %d bytes after an arrival no write has read yet, want %d", a.held, len(arrivalContent('b')))
	}
	if b, err := readAll(a, a2); err != nil || !bytes.Equal(b, arrivalContent('b')) || stored.reads != 1 {
		t.Fatalf("an arrived blob: %q %v after %d store reads; want it from memory", b, err, stored.reads)
	}
}

func TestArrivalsReadTheStoreForWhatDidNotComeOnceTheFetchEnded(t *testing.T) {
	chunked := arrivalID('c')
	stored := &storedBlobs{contents: map[objects.ID][]byte{}}
	a := newArrivals(stored, 1<<20, []objects.ID{chunked}, map[objects.ID]int{chunked: 1})
	waiting := readLater(t, a, chunked)
	stored.contents[chunked] = arrivalContent('c') // the fetch stored it, not handing it over
	a.end(nil)
	if err := <-waiting; err != nil || stored.reads != 1 {
		t.Fatalf("a blob the fetch stored and ended: %v after %d store reads; want it read from the store", err, stored.reads)
	}
}

func TestArrivalsFailTheWritesWaitingWhenTheFetchFails(t *testing.T) {
	id, got := arrivalID('a'), arrivalID('g')
	a := newArrivals(&storedBlobs{}, 1<<20, []objects.ID{got, id}, map[objects.ID]int{id: 1, got: 1})
	a.arrive(got, arrivalContent('g'))
	waiting := readLater(t, a, id)
	failure := errors.New("connection reset")
	a.end(failure)
	if err := <-waiting; !errors.Is(err, failure) {
		t.Fatalf("a write waiting when the fetch failed: %v, want the fetch's failure", err)
	}
	if b, err := a.Get(got); err != nil || !bytes.Equal(b, arrivalContent('g')) {
		t.Fatalf("a blob that arrived before the failure: %q %v, want its content", b, err)
	}
}

func TestArrivalsRoomWaitsWhileTheWritesHaveEnough(t *testing.T) {
	ids := []objects.ID{arrivalID('a'), arrivalID('b'), arrivalID('c')}
	uses := map[objects.ID]int{ids[0]: 1, ids[1]: 1, ids[2]: 1}
	a := newArrivals(&storedBlobs{}, 4, ids, uses)
	ctx := context.Background()
	if err := a.room(ctx); err != nil {
		t.Fatalf("room with nothing held: %v", err)
	}
	a.arrive(ids[0], arrivalContent('a'))
	a.arrive(ids[1], arrivalContent('b'))

	// Over the bound: room waits, still after a write took one of two blobs.
	full := func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.full()
	}
	if !full() {
		t.Fatalf("room would not wait with %d bytes held over a bound of 4 and no write waiting", a.held)
	}
	roomed := make(chan error, 1)
	go func() { roomed <- a.room(ctx) }()
	if _, err := a.Get(ids[0]); err != nil {
		t.Fatal(err)
	}
	if !full() {
		t.Fatalf("room would not wait with %d bytes still held and no write waiting", a.held)
	}
	// A write waiting for a blob still to come lets the fetch go on, held or not.
	waiting := readLater(t, a, ids[2])
	if err := <-roomed; err != nil {
		t.Fatalf("room while a write waits: %v", err)
	}
	a.arrive(ids[2], arrivalContent('c'))
	if err := <-waiting; err != nil {
		t.Fatal(err)
	}

	// The writes ended (one blob never read: its write was left alone):
	// nothing is held, room returns, and what arrives is dropped.
	a.close()
	if err := a.room(ctx); err != nil || a.held != 0 {
		t.Fatalf("room after the writes ended: %v with %d bytes held", err, a.held)
	}
	cancelled, cancel := context.WithCancel(ctx)
	b := newArrivals(&storedBlobs{}, 0, ids, uses)
	b.arrive(ids[0], arrivalContent('a'))
	go cancel()
	if err := b.room(cancelled); !errors.Is(err, context.Canceled) {
		t.Fatalf("room when the fetch is cancelled: %v, want context.Canceled", err)
	}
}
