package remotetest

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/ckpt/ckpt/engine/remote"
)

// racers is how many goroutines race for one conditional write.
const racers = 8

func testIfAbsent(t *testing.T, b remote.Backend) {
	first := content("first", 100)
	etag, err := putIf(b, "head", first, remote.IfAbsent())
	if err != nil {
		t.Fatalf("IfAbsent Put of a new key: %v", err)
	}
	if _, err := putIf(b, "head", []byte("second"), remote.IfAbsent()); !errors.Is(err, remote.ErrPrecondition) {
		t.Fatalf("IfAbsent Put over an object = %v, want ErrPrecondition", err)
	}
	if info := wantContent(t, b, "head", first); info.ETag != etag {
		t.Fatalf("ETag %q after a refused put, want %q", info.ETag, etag)
	}
}

// testConditionsOnLargeObjects checks conditions on objects large enough
// that an unconditional put of them is a multipart upload, whose completion
// a client may send without the condition.
func testConditionsOnLargeObjects(t *testing.T, b remote.Backend) {
	v1, v2 := content("mp1", MultipartSize), content("mp2", MultipartSize)
	e1, err := putIf(b, "big", v1, remote.IfAbsent())
	if err != nil {
		t.Fatalf("IfAbsent multipart Put of a new key: %v", err)
	}
	if _, err := putIf(b, "big", v2, remote.IfAbsent()); !errors.Is(err, remote.ErrPrecondition) {
		t.Fatalf("IfAbsent multipart Put over an object = %v, want ErrPrecondition", err)
	}
	if _, err := putIf(b, "big", v2, remote.IfMatch(e1+"0")); !errors.Is(err, remote.ErrPrecondition) {
		t.Fatalf("IfMatch multipart Put with a wrong ETag = %v, want ErrPrecondition", err)
	}
	e2, err := putIf(b, "big", v2, remote.IfMatch(e1))
	if err != nil {
		t.Fatalf("IfMatch multipart Put with the current ETag: %v", err)
	}
	if info := wantContent(t, b, "big", v2); info.ETag != e2 {
		t.Fatalf("ETag %q, want %q", info.ETag, e2)
	}
}

// race runs racers puts of key with cond at once, each of its own content
// (distinct from that of other rounds), and returns the ETag of the one
// that succeeded, failing the test unless exactly one did and all others
// failed with ErrPrecondition.
func race(t *testing.T, b remote.Backend, key string, round int, cond remote.Condition) string {
	t.Helper()
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		etags [racers]string
		errs  [racers]error
	)
	for i := range racers {
		wg.Go(func() {
			<-start
			etags[i], errs[i] = putIf(b, key, content(fmt.Sprint(key, round, i), 1000+i), cond)
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("%v: racers %d and %d both succeeded", cond, winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, remote.ErrPrecondition):
			t.Fatalf("%v: racer %d: %v, want ErrPrecondition", cond, i, err)
		}
	}
	if winner < 0 {
		t.Fatalf("%v: no racer succeeded", cond)
	}
	info := wantContent(t, b, key, content(fmt.Sprint(key, round, winner), 1000+winner))
	if info.ETag != etags[winner] {
		t.Fatalf("%v: stored ETag %q, winner got %q", cond, info.ETag, etags[winner])
	}
	return etags[winner]
}

func testIfAbsentRace(t *testing.T, b remote.Backend) {
	for round := range 3 {
		race(t, b, "created/"+strconv.Itoa(round), round, remote.IfAbsent())
	}
}

func testIfMatch(t *testing.T, b remote.Backend) {
	v1 := put(t, b, "head", []byte("v1"))
	v2, err := putIf(b, "head", []byte("v2"), remote.IfMatch(v1))
	if err != nil {
		t.Fatalf("IfMatch Put with the current ETag: %v", err)
	}
	if _, err := putIf(b, "head", []byte("v3"), remote.IfMatch(v1)); !errors.Is(err, remote.ErrPrecondition) {
		t.Fatalf("IfMatch Put with a stale ETag = %v, want ErrPrecondition", err)
	}
	if info := wantContent(t, b, "head", []byte("v2")); info.ETag != v2 {
		t.Fatalf("ETag %q, want %q", info.ETag, v2)
	}
	if _, err := putIf(b, "absent", []byte("x"), remote.IfMatch(v2)); !errors.Is(err, remote.ErrPrecondition) {
		t.Fatalf("IfMatch Put of an absent key = %v, want ErrPrecondition", err)
	}
	wantNotFound(t, b, "absent")
}

func testIfMatchRace(t *testing.T, b remote.Backend) {
	etag := put(t, b, "head", []byte("base"))
	for round := range 3 {
		etag = race(t, b, "head", round, remote.IfMatch(etag))
	}
}

// testIfMatchCounter has workers increment a counter object by
// read-modify-write, retrying on ErrPrecondition: with a true
// compare-and-swap no increment is lost.
func testIfMatchCounter(t *testing.T, b remote.Backend) {
	const workers, each = 4, 3
	put(t, b, "counter", []byte("0"))
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for range each {
				if err := increment(b, "counter"); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	wantContent(t, b, "counter", []byte(strconv.Itoa(workers*each)))
}

// increment adds one to the counter at key. It runs outside the test's
// goroutine, so it reports failures instead of failing the test.
func increment(b remote.Backend, key string) error {
	for attempt := 0; attempt < 1000; attempt++ {
		data, info, err := readAll(b, key)
		if err != nil {
			return err
		}
		n, err := strconv.Atoi(string(data))
		if err != nil {
			return fmt.Errorf("counter holds %q", data)
		}
		_, err = putIf(b, key, []byte(strconv.Itoa(n+1)), remote.IfMatch(info.ETag))
		if err == nil {
			return nil
		}
		if !errors.Is(err, remote.ErrPrecondition) {
			return err
		}
	}
	return fmt.Errorf("increment of %s kept failing its precondition", key)
}
