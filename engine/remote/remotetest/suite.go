// Package remotetest is the conformance suite of remote.Backend: every
// guarantee the interface documents, as tests that any implementation must
// pass. A backend's own test calls Run with a constructor of empty
// backends.
package remotetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/ckpt/ckpt/engine/remote"
)

// MultipartSize is the size of the largest object the suite writes, one
// byte over 5 MiB: a backend whose client splits uploads into 5 MiB parts
// (S3's smallest) writes it as a multipart upload of two parts.
const MultipartSize = 5<<20 + 1

// Run runs the suite. newBackend must return a backend that holds no
// objects and that the test may fill; it is called once per subtest, and
// should register its own cleanup with t.Cleanup.
func Run(t *testing.T, newBackend func(t *testing.T) remote.Backend) {
	tests := []struct {
		name string
		fn   func(t *testing.T, b remote.Backend)
	}{
		{"RoundTripsObjectsOfEverySize", testRoundTrip},
		{"PutReplacesAnObjectWhole", testReplace},
		{"ShortReaderStoresNothing", testShortReader},
		{"RangedReadsReturnExactlyTheRange", testRanges},
		{"MissingObjectsAreNotFound", testNotFound},
		{"DeleteRemovesAndIsIdempotent", testDelete},
		{"OddKeysRoundTripAndStayDistinct", testOddKeys},
		{"InvalidKeysAreRefusedBeforeAnyIO", testInvalidKeys},
		{"ListFiltersByPrefixInByteOrder", testListPrefixes},
		{"ListPagesCoverEveryObjectOnce", testListPages},
		{"IfAbsentCreatesOnlyOnce", testIfAbsent},
		{"IfAbsentRaceHasExactlyOneWinner", testIfAbsentRace},
		{"ConditionsHoldForLargeObjects", testConditionsOnLargeObjects},
		{"IfMatchReplacesOnlyTheExpectedVersion", testIfMatch},
		{"IfMatchRaceHasExactlyOneWinner", testIfMatchRace},
		{"IfMatchCountersLoseNoIncrement", testIfMatchCounter},
		{"CancelledContextStopsEveryCall", testCancelled},
		{"PutCancelledMidStreamStoresNothing", testCancelMidPut},
		{"GetCancelledMidStreamFails", testCancelMidGet},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, newBackend(t))
		})
	}
}

// content is n deterministic bytes that differ with seed.
func content(seed string, n int) []byte {
	buf := make([]byte, n)
	x := uint32(2166136261)
	for _, c := range []byte(seed) {
		x = (x ^ uint32(c)) * 16777619
	}
	for i := range buf {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		buf[i] = byte(x)
	}
	return buf
}

func put(t *testing.T, b remote.Backend, key string, data []byte) string {
	t.Helper()
	etag, err := b.Put(context.Background(), key, bytes.NewReader(data), int64(len(data)), remote.Condition{})
	if err != nil {
		t.Fatalf("Put(%q, %d bytes): %v", key, len(data), err)
	}
	if etag == "" {
		t.Fatalf("Put(%q) returned an empty ETag", key)
	}
	return etag
}

func putIf(b remote.Backend, key string, data []byte, cond remote.Condition) (string, error) {
	return b.Put(context.Background(), key, bytes.NewReader(data), int64(len(data)), cond)
}

// get reads key whole.
func get(t *testing.T, b remote.Backend, key string) ([]byte, remote.ObjectInfo) {
	t.Helper()
	data, info, err := readAll(b, key)
	if err != nil {
		t.Fatal(err)
	}
	return data, info
}

// readAll reads key whole and checks that Get's info agrees with the bytes.
func readAll(b remote.Backend, key string) ([]byte, remote.ObjectInfo, error) {
	rc, info, err := b.Get(context.Background(), key)
	if err != nil {
		return nil, info, fmt.Errorf("Get(%q): %w", key, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return nil, info, fmt.Errorf("Get(%q): read: %w", key, err)
	}
	if info.Key != key || info.Size != int64(len(data)) {
		return nil, info, fmt.Errorf("Get(%q) info = %+v, read %d bytes", key, info, len(data))
	}
	return data, info, nil
}

func wantContent(t *testing.T, b remote.Backend, key string, want []byte) remote.ObjectInfo {
	t.Helper()
	got, info := get(t, b, key)
	if !bytes.Equal(got, want) {
		t.Fatalf("Get(%q) = %d bytes %s, want %d bytes %s", key, len(got), short(got), len(want), short(want))
	}
	return info
}

func wantNotFound(t *testing.T, b remote.Backend, key string) {
	t.Helper()
	if _, err := b.Stat(context.Background(), key); !errors.Is(err, remote.ErrNotFound) {
		t.Fatalf("Stat(%q) = %v, want ErrNotFound", key, err)
	}
}

func short(b []byte) string {
	if len(b) > 8 {
		return fmt.Sprintf("%x…", b[:8])
	}
	return fmt.Sprintf("%x", b)
}
