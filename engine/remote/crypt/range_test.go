package crypt

import (
	"bytes"
	"context"
	"errors"
	"io"
	"runtime"
	"sync"
	"testing"

	"github.com/ckpt/ckpt/engine/remote"
	"github.com/ckpt/ckpt/internal/osfs"
)

// rangeLog records the ranged reads a backend is asked for.
type rangeLog struct {
	remote.Backend
	mu     sync.Mutex
	ranges [][2]int64
}

func (r *rangeLog) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	r.mu.Lock()
	r.ranges = append(r.ranges, [2]int64{off, n})
	r.mu.Unlock()
	return r.Backend.GetRange(ctx, key, off, n)
}

func (r *rangeLog) take() [][2]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	ranges := r.ranges
	r.ranges = nil
	return ranges
}

// Ranges that start, end or straddle segment boundaries, in objects whose
// last segment is full and partial, return exactly their bytes and fetch
// exactly the segments that cover them.
func TestRangedReadsAtSegmentBoundariesFetchOnlyCoveringSegments(t *testing.T) {
	const S = segmentSize
	log := &rangeLog{Backend: openDir(t, t.TempDir())}
	b := Wrap(log, testKey(t))
	for _, size := range []int64{3 * S, 3*S + 5} {
		data := plaintext(6, int(size))
		putBytes(t, b, "obj", data)
		for _, r := range [][2]int64{
			{0, 1}, {0, S}, {0, S + 1}, {S - 1, 1}, {S - 1, 2}, {S, 1}, {S, S}, {S - 1, S + 2},
			{2 * S, size - 2*S}, {size - 1, 1}, {1, size - 1}, {0, size}, {S + 7, 3},
		} {
			off, n := r[0], r[1]
			if got, err := readRange(t, b, "obj", off, n, data); err != nil || int64(got) != n {
				t.Fatalf("size %d: GetRange(%d, %d) = %d bytes, %v", size, off, n, got, err)
			}
			first, last := off/S, (off+n-1)/S
			lastLen := min(S, size-last*S)
			want := [][2]int64{}
			if first > 0 {
				want = append(want, [2]int64{0, int64(headerSize)})
			}
			start := int64(headerSize) + first*(S+segmentOverhead)
			end := int64(headerSize) + last*(S+segmentOverhead) + lastLen + segmentOverhead
			if first == 0 {
				start = 0
			}
			want = append(want, [2]int64{start, end - start})
			if got := log.take(); !equalRanges(got, want) {
				t.Fatalf("size %d: GetRange(%d, %d) fetched %v, want %v", size, off, n, got, want)
			}
		}
	}
}

func equalRanges(a, b [][2]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSizesArePlaintextSizesAndSealedSizesInvert(t *testing.T) {
	for _, l := range []layout{tinySegments, {seg: segmentSize}} {
		valid := map[int64]int64{}
		for size := int64(0); size <= 5*l.seg+3; size++ {
			sealed := l.sealedSize(size)
			valid[sealed] = size
			if got, ok := l.plainSize(sealed); !ok || got != size {
				t.Fatalf("seg %d: plainSize(sealedSize(%d) = %d) = %d, %v", l.seg, size, sealed, got, ok)
			}
		}
		for sealed := int64(0); sealed <= l.sealedSize(5*l.seg+3); sealed++ {
			size, ok := l.plainSize(sealed)
			if want, isValid := valid[sealed]; ok != isValid || ok && size != want {
				t.Fatalf("seg %d: plainSize(%d) = %d, %v; want %d, %v", l.seg, sealed, size, ok, want, isValid)
			}
		}
	}
	if _, ok := (layout{seg: segmentSize}).plainSize(1 << 62); ok {
		t.Fatalf("plainSize accepts a size over maxSize")
	}
}

// FuzzGetRange checks ranged reads of objects of every shape against the
// plaintext, with segments of 16 bytes so that a few hundred bytes span
// many of them.
func FuzzGetRange(f *testing.F) {
	for _, seed := range [][3]int64{{0, 0, 0}, {100, 0, 100}, {100, 16, 16}, {100, 15, 2}, {64, 48, 16}, {64, 64, 0}, {64, 60, 5}, {1, 1, 1}, {33, -1, 2}} {
		f.Add(seed[0], seed[1], seed[2])
	}
	raw, err := remote.OpenDir(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	secret := bytes.Repeat([]byte{7}, KeySize)
	k, err := ParseKey(secret)
	if err != nil {
		f.Fatal(err)
	}
	b := wrap(raw, k, layout{seg: 16})
	f.Fuzz(func(t *testing.T, size, off, n int64) {
		size = size & 511
		data := plaintext(byte(size), int(size))
		putBytes(t, b, "obj", data)
		rc, err := b.GetRange(context.Background(), "obj", off, n)
		var got []byte
		if err == nil {
			got, err = io.ReadAll(rc)
			rc.Close()
		}
		switch {
		case off < 0 || n < 0:
			if err == nil {
				t.Fatalf("GetRange(%d, %d) of %d bytes succeeded", off, n, size)
			}
		case off > size || n > size-off:
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("GetRange(%d, %d) of %d bytes = %v, want io.ErrUnexpectedEOF", off, n, size, err)
			}
		case err != nil:
			t.Fatalf("GetRange(%d, %d) of %d bytes: %v", off, n, size, err)
		case !bytes.Equal(got, data[off:off+n]):
			t.Fatalf("GetRange(%d, %d) of %d bytes returned wrong bytes", off, n, size)
		}
	})
}

// replaceOnce replaces the object at key with the stored bytes next right
// after its call named at (Stat or GetRange) first returns.
type replaceOnce struct {
	remote.Backend
	t       *testing.T
	at, key string
	next    []byte // nil to delete the object
	done    bool
}

func (r *replaceOnce) after(call string) {
	if call == r.at && !r.done {
		r.done = true
		if r.next == nil {
			if err := r.Backend.Delete(context.Background(), r.key); err != nil {
				r.t.Error(err)
			}
			return
		}
		putBytes(r.t, r.Backend, r.key, r.next)
	}
}

func (r *replaceOnce) Stat(ctx context.Context, key string) (remote.ObjectInfo, error) {
	defer r.after("Stat")
	return r.Backend.Stat(ctx, key)
}

func (r *replaceOnce) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	defer r.after("GetRange")
	return r.Backend.GetRange(ctx, key, off, n)
}

// skipUnlessReplaceableWhileOpen skips the test where the file system
// refuses to rename a file over one a reader holds open: Windows without
// POSIX rename semantics (Wine, FAT). There a replacement waits for the
// reader instead, so a read can never straddle two versions.
func skipUnlessReplaceableWhileOpen(t *testing.T, b remote.Backend) {
	putBytes(t, b, "probe", []byte("old"))
	r, _, err := b.Get(context.Background(), "probe")
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Put(context.Background(), "probe", bytes.NewReader([]byte("new")), 3, remote.Condition{})
	r.Close()
	if runtime.GOOS == "windows" && osfs.IsSharingViolation(err) {
		t.Skipf("this file system cannot replace a file a reader holds open: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func TestRangedReadOfAReplacedObjectIsAChangeNotDamage(t *testing.T) {
	for _, tc := range []struct {
		name     string
		at       string
		nextSize int // -1 to delete the object instead
		off, n   int64
	}{
		// The header comes from the old version, the segments from the new.
		{"ReplacedAfterTheHeader", "GetRange", 5 * 64, 100, 20},
		// The new version is shorter than the Stat said.
		{"ShrunkAfterTheStat", "Stat", 10, 0, 200},
		{"DeletedAfterTheHeader", "GetRange", -1, 100, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := openDir(t, t.TempDir())
			if tc.nextSize >= 0 {
				skipUnlessReplaceableWhileOpen(t, raw)
			}
			k := testKey(t)
			data := plaintext(10, 5*64)
			putBytes(t, wrap(raw, k, tinySegments), "obj", data)
			r := &replaceOnce{Backend: raw, t: t, at: tc.at, key: "obj"}
			if tc.nextSize >= 0 {
				putBytes(t, wrap(raw, k, tinySegments), "next", plaintext(11, tc.nextSize))
				r.next = getBytes(t, raw, "next")
			}
			err := rangeErr(t, wrap(r, k, tinySegments), "obj", tc.off, tc.n, data)
			if !errors.Is(err, ErrChanged) || errors.Is(err, ErrAuth) {
				t.Fatalf("GetRange across a replacement = %v, want ErrChanged", err)
			}
			if deleted := tc.nextSize < 0; errors.Is(err, remote.ErrNotFound) != deleted {
				t.Fatalf("GetRange across a replacement = %v; ErrNotFound should be %v", err, deleted)
			}
		})
	}
}
