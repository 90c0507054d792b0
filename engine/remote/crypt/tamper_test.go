package crypt

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/ckpt/ckpt/engine/remote"
)

// tinySegments makes objects of a few hundred bytes span several segments.
var tinySegments = layout{seg: 64}

// plaintext is n deterministic bytes that differ with seed.
func plaintext(seed byte, n int) []byte {
	p := make([]byte, n)
	rand.NewChaCha8([32]byte{seed}).Read(p)
	return p
}

func putBytes(t *testing.T, b remote.Backend, key string, data []byte) {
	t.Helper()
	if _, err := b.Put(context.Background(), key, bytes.NewReader(data), int64(len(data)), remote.Condition{}); err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
}

func getBytes(t *testing.T, b remote.Backend, key string) []byte {
	t.Helper()
	rc, _, err := b.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	return data
}

// readErr reads key whole and returns the error of Get or of reading,
// failing the test if any byte it yields before the error is wrong.
func readErr(t *testing.T, b remote.Backend, key string, want []byte) error {
	t.Helper()
	rc, _, err := b.Get(context.Background(), key)
	if err != nil {
		return err
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if !bytes.HasPrefix(want, got) {
		t.Fatalf("Get(%q) yielded %d bytes that are not the plaintext's", key, len(got))
	}
	return err
}

// readRange reads the n bytes of key at off and returns how many it read
// and the error of GetRange or of reading, failing the test if any byte it
// yields is not want's at its offset.
func readRange(t *testing.T, b remote.Backend, key string, off, n int64, want []byte) (int, error) {
	t.Helper()
	rc, err := b.GetRange(context.Background(), key, off, n)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if int64(len(want)) < off || !bytes.HasPrefix(want[off:], got) {
		t.Fatalf("GetRange(%q, %d, %d) yielded %d bytes that are not the plaintext's", key, off, n, len(got))
	}
	return len(got), err
}

// rangeErr is the error of readRange.
func rangeErr(t *testing.T, b remote.Backend, key string, off, n int64, want []byte) error {
	t.Helper()
	_, err := readRange(t, b, key, off, n, want)
	return err
}

// wantAuthFailure checks that every way of reading key's bytes fails with
// ErrAuth. (A ranged read of no bytes has nothing to authenticate.)
func wantAuthFailure(t *testing.T, b remote.Backend, key string, want []byte) {
	t.Helper()
	if err := readErr(t, b, key, want); !errors.Is(err, ErrAuth) {
		t.Fatalf("Get = %v, want ErrAuth", err)
	}
	info, err := b.Stat(context.Background(), key)
	if err != nil {
		if !errors.Is(err, ErrAuth) {
			t.Fatalf("Stat = %v, want ErrAuth or success", err)
		}
		info.Size = int64(len(want))
	}
	if info.Size == 0 {
		return
	}
	if err := rangeErr(t, b, key, 0, info.Size, want); !errors.Is(err, ErrAuth) {
		t.Fatalf("GetRange(0, %d) = %v, want ErrAuth", info.Size, err)
	}
}

func TestTamperingIsAnAuthenticationError(t *testing.T) {
	l := tinySegments
	stride := int(l.seg + segmentOverhead)
	seg := func(i int) int { return int(l.offset(int64(i))) }
	flip := func(at func([]byte) int) func(s, _ []byte) []byte {
		return func(s, _ []byte) []byte { s[at(s)] ^= 0x20; return s }
	}
	// The object under test has three full segments and a last one of 10
	// bytes; other is a second object of the same size under another key.
	for _, tc := range []struct {
		name   string
		damage func(sealed, other []byte) []byte
	}{
		{"FlipMagic", flip(func([]byte) int { return 0 })},
		{"FlipObjectID", flip(func([]byte) int { return len(magic) + 3 })},
		{"FlipFirstNonce", flip(func([]byte) int { return seg(0) })},
		{"FlipMiddleCiphertext", flip(func([]byte) int { return seg(1) + nonceSize + 7 })},
		{"FlipLastTag", flip(func(s []byte) int { return len(s) - 1 })},
		{"DropLastSegment", func(s, _ []byte) []byte { return s[:seg(3)] }},
		{"DropLastTwoSegments", func(s, _ []byte) []byte { return s[:seg(2)] }},
		{"CutMidSegment", func(s, _ []byte) []byte { return s[:len(s)-5] }},
		{"CutToHeader", func(s, _ []byte) []byte { return s[:headerSize] }},
		{"CutToNothing", func(s, _ []byte) []byte { return s[:0] }},
		{"AppendACopiedSegment", func(s, _ []byte) []byte {
			return append(s[:seg(3):seg(3)], append(bytes.Clone(s[seg(2):seg(3)]), s[seg(3):]...)...)
		}},
		{"SwapFirstTwoSegments", func(s, _ []byte) []byte {
			out := bytes.Clone(s)
			copy(out[seg(0):], s[seg(1):seg(1)+stride])
			copy(out[seg(1):], s[seg(0):seg(0)+stride])
			return out
		}},
		{"SwapWithAnotherObject", func(_, o []byte) []byte { return o }},
		{"HeaderOfAnotherObject", func(s, o []byte) []byte {
			copy(s, o[:headerSize])
			return s
		}},
		{"SegmentOfAnotherObject", func(s, o []byte) []byte {
			copy(s[seg(1):seg(2)], o[seg(1):seg(2)])
			return s
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := openDir(t, t.TempDir())
			b := wrap(raw, testKey(t), l)
			want, other := plaintext(1, 3*64+10), plaintext(2, 3*64+10)
			putBytes(t, b, "obj", want)
			putBytes(t, b, "obk", other) // a key as long as obj's
			putBytes(t, raw, "obj", tc.damage(getBytes(t, raw, "obj"), getBytes(t, raw, "obk")))
			wantAuthFailure(t, b, "obj", want)
		})
	}
}

// Two versions of one key, sealed with the same key, cannot be spliced:
// each version's random id binds its segments to its header.
func TestSegmentsOfAnotherVersionAreAnAuthenticationError(t *testing.T) {
	raw := openDir(t, t.TempDir())
	b := wrap(raw, testKey(t), tinySegments)
	data := plaintext(3, 5*64)
	putBytes(t, b, "obj", data)
	v1 := getBytes(t, raw, "obj")
	putBytes(t, b, "obj", data)
	v2 := getBytes(t, raw, "obj")
	seg1, seg2 := tinySegments.offset(1), tinySegments.offset(2)
	copy(v2[seg1:seg2], v1[seg1:seg2])
	putBytes(t, raw, "obj", v2)
	wantAuthFailure(t, b, "obj", data)
	if err := rangeErr(t, b, "obj", 64, 64, data); !errors.Is(err, ErrAuth) {
		t.Fatalf("GetRange of the spliced segment = %v, want ErrAuth", err)
	}
	if n, err := readRange(t, b, "obj", 128, 64, data); err != nil || n != 64 {
		t.Fatalf("GetRange of an intact segment of the spliced object = %d bytes, %v", n, err)
	}
}

func TestWrongKeyIsAnAuthenticationError(t *testing.T) {
	raw := openDir(t, t.TempDir())
	right, wrong := Wrap(raw, testKey(t)), Wrap(raw, testKey(t))
	for _, size := range []int{0, 1, segmentSize, 2*segmentSize + 3} {
		data := plaintext(4, size)
		putBytes(t, right, "obj", data)
		wantAuthFailure(t, wrong, "obj", data)
		if size > segmentSize {
			if err := rangeErr(t, wrong, "obj", segmentSize+1, 5, data); !errors.Is(err, ErrAuth) {
				t.Fatalf("size %d: GetRange in the second segment with a wrong key = %v, want ErrAuth", size, err)
			}
		}
	}
}

func TestPlaintextStoredUnsealedIsAnAuthenticationError(t *testing.T) {
	raw := openDir(t, t.TempDir())
	b := Wrap(raw, testKey(t))
	data := plaintext(5, 1000)
	putBytes(t, raw, "obj", data)
	wantAuthFailure(t, b, "obj", data)
}
