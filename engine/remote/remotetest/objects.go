package remotetest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/engine/remote"
)

func testRoundTrip(t *testing.T, b remote.Backend) {
	for _, size := range []int{0, 1, 5 << 20, MultipartSize} {
		key := "sizes/" + strings.Repeat("x", 1+size%7)
		data := content(key, size)
		etag := put(t, b, key, data)
		info := wantContent(t, b, key, data)
		st, err := b.Stat(context.Background(), key)
		if err != nil {
			t.Fatalf("Stat(%q): %v", key, err)
		}
		if info.ETag != etag || st.ETag != etag || st.Size != int64(size) || st.Key != key {
			t.Fatalf("size %d: Put ETag %q, Get info %+v, Stat %+v", size, etag, info, st)
		}
		if st.Modified.IsZero() {
			t.Fatalf("Stat(%q).Modified is zero", key)
		}
		if err := b.Delete(context.Background(), key); err != nil {
			t.Fatalf("Delete(%q): %v", key, err)
		}
	}
}

func testReplace(t *testing.T, b remote.Backend) {
	v1, v2 := content("v1", 1000), content("v2", 10)
	e1 := put(t, b, "obj", v1)
	e2 := put(t, b, "obj", v2)
	if e1 == e2 {
		t.Fatalf("different contents share ETag %q", e1)
	}
	if info := wantContent(t, b, "obj", v2); info.ETag != e2 {
		t.Fatalf("Get ETag %q after a Put returned %q", info.ETag, e2)
	}
}

func testShortReader(t *testing.T, b remote.Backend) {
	old := put(t, b, "kept", []byte("old"))
	for _, key := range []string{"kept", "fresh"} {
		_, err := b.Put(context.Background(), key, strings.NewReader("only 9 b"), 100, remote.Condition{})
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("Put(%q) of a short reader = %v, want io.ErrUnexpectedEOF", key, err)
		}
	}
	if info := wantContent(t, b, "kept", []byte("old")); info.ETag != old {
		t.Fatalf("ETag moved from %q to %q", old, info.ETag)
	}
	wantNotFound(t, b, "fresh")
}

func testRanges(t *testing.T, b remote.Backend) {
	data := content("ranges", MultipartSize)
	put(t, b, "big", data)
	size := int64(len(data))
	for _, r := range [][2]int64{{0, 1}, {10, 100}, {size - 1, 1}, {0, size}, {500, 0}, {size, 0}, {5<<20 - 10, 11}} {
		got := readRange(t, b, "big", r[0], r[1])
		if want := data[r[0] : r[0]+r[1]]; !bytes.Equal(got, want) {
			t.Fatalf("GetRange(%d, %d) = %d bytes %s, want %d bytes %s", r[0], r[1], len(got), short(got), len(want), short(want))
		}
	}
	for _, r := range [][2]int64{{size - 10, 20}, {size, 1}, {size + 5, 1}} {
		if err := rangeError(b, "big", r[0], r[1]); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("GetRange(%d, %d) past the end of %d bytes: %v, want io.ErrUnexpectedEOF", r[0], r[1], size, err)
		}
	}
}

func readRange(t *testing.T, b remote.Backend, key string, off, n int64) []byte {
	t.Helper()
	rc, err := b.GetRange(context.Background(), key, off, n)
	if err != nil {
		t.Fatalf("GetRange(%q, %d, %d): %v", key, off, n, err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("GetRange(%q, %d, %d): read: %v", key, off, n, err)
	}
	return got
}

// rangeError is the error of opening or reading the range, whichever
// reports it.
func rangeError(b remote.Backend, key string, off, n int64) error {
	rc, err := b.GetRange(context.Background(), key, off, n)
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = io.ReadAll(rc)
	return err
}

func testNotFound(t *testing.T, b remote.Backend) {
	ctx := context.Background()
	put(t, b, "dir/present", []byte("x"))
	for _, key := range []string{"absent", "dir/absent", "dir/present/below", "dir"} {
		if _, _, err := b.Get(ctx, key); !errors.Is(err, remote.ErrNotFound) {
			t.Errorf("Get(%q) = %v, want ErrNotFound", key, err)
		}
		if _, err := b.GetRange(ctx, key, 0, 1); !errors.Is(err, remote.ErrNotFound) {
			t.Errorf("GetRange(%q) = %v, want ErrNotFound", key, err)
		}
		if _, err := b.Stat(ctx, key); !errors.Is(err, remote.ErrNotFound) {
			t.Errorf("Stat(%q) = %v, want ErrNotFound", key, err)
		}
	}
}

func testDelete(t *testing.T, b remote.Backend) {
	ctx := context.Background()
	put(t, b, "d/one", []byte("1"))
	put(t, b, "d/two", []byte("2"))
	for range 2 {
		if err := b.Delete(ctx, "d/one"); err != nil {
			t.Fatalf("Delete: %v", err)
		}
	}
	wantNotFound(t, b, "d/one")
	if _, _, err := b.Get(ctx, "d/one"); !errors.Is(err, remote.ErrNotFound) {
		t.Fatalf("Get after Delete = %v, want ErrNotFound", err)
	}
	if keys := listAll(t, b, "d/", 0); !equal(keys, []string{"d/two"}) {
		t.Fatalf("List after Delete = %q", keys)
	}
	if _, err := putIf(b, "d/one", []byte("again"), remote.IfAbsent()); err != nil {
		t.Fatalf("IfAbsent Put after Delete: %v", err)
	}
	if err := b.Delete(ctx, "never/existed"); err != nil {
		t.Fatalf("Delete of an absent key: %v", err)
	}
}

// oddKeys need escaping in URLs, XML or file names, or differ only in case
// or Unicode normalisation.
var oddKeys = []string{
	"with space/and  two",
	"plus+sign", "percent%41", "percent%2F", "query?x=1&y=2", "hash#frag",
	"semi;colon,comma", "quote'\"", "star*", "tilde~",
	"Upper/Case", "upper/case", "UPPER/CASE",
	"caf\u00e9", "cafe\u0301", "日本語/キー", "emoji😀",
	"trailing.", "a..b", ".hidden", "-dash", "_under",
	"con", "nul.txt", "com1", "<angle>|pipe:colon",
}

func testOddKeys(t *testing.T, b remote.Backend) {
	for i, key := range oddKeys {
		put(t, b, key, content(key, i+1))
	}
	for i, key := range oddKeys {
		wantContent(t, b, key, content(key, i+1))
	}
	want := sorted(oddKeys)
	if got := listAll(t, b, "", 0); !equal(got, want) {
		t.Fatalf("List = %q\nwant %q", got, want)
	}
	if got := listAll(t, b, "upper/", 0); !equal(got, []string{"upper/case"}) {
		t.Fatalf("List(upper/) = %q", got)
	}
}

func testInvalidKeys(t *testing.T, b remote.Backend) {
	ctx := context.Background()
	for _, key := range []string{"", "/lead", "trail/", "a//b", "./a", "a/../b", "..", "nul\x00", "line\nfeed", "back\\slash", "bad\xffutf8", strings.Repeat("k", remote.MaxKeyLen+1)} {
		if _, err := putIf(b, key, []byte("x"), remote.Condition{}); !errors.Is(err, remote.ErrInvalidKey) {
			t.Errorf("Put(%q) = %v, want ErrInvalidKey", key, err)
		}
		if _, _, err := b.Get(ctx, key); !errors.Is(err, remote.ErrInvalidKey) {
			t.Errorf("Get(%q) = %v, want ErrInvalidKey", key, err)
		}
		if err := b.Delete(ctx, key); !errors.Is(err, remote.ErrInvalidKey) {
			t.Errorf("Delete(%q) = %v, want ErrInvalidKey", key, err)
		}
	}
}
