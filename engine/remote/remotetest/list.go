package remotetest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/ckpt/ckpt/engine/remote"
)

var listKeys = []string{
	"p/a", "p/b/1", "p/b/2", "p/b/sub/deep", "p/b.x", "p/c", "p-dash", "p0", "q/x", "pa/b",
}

func testListPrefixes(t *testing.T, b remote.Backend) {
	etags := map[string]string{}
	for i, key := range listKeys {
		etags[key] = put(t, b, key, content(key, 10*i))
	}
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"", sorted(listKeys)},
		{"p/", []string{"p/a", "p/b.x", "p/b/1", "p/b/2", "p/b/sub/deep", "p/c"}},
		{"p/b", []string{"p/b.x", "p/b/1", "p/b/2", "p/b/sub/deep"}},
		{"p/b/", []string{"p/b/1", "p/b/2", "p/b/sub/deep"}},
		{"p", []string{"p-dash", "p/a", "p/b.x", "p/b/1", "p/b/2", "p/b/sub/deep", "p/c", "p0", "pa/b"}},
		{"p/c", []string{"p/c"}},
		{"p/cc", nil},
		{"nothing/", nil},
	} {
		page, err := b.List(context.Background(), tc.prefix, "", 0)
		if err != nil {
			t.Fatalf("List(%q): %v", tc.prefix, err)
		}
		if page.Next != "" {
			t.Errorf("List(%q).Next = %q on the only page", tc.prefix, page.Next)
		}
		if got := keysOf(page); !equal(got, tc.want) {
			t.Errorf("List(%q) = %q, want %q", tc.prefix, got, tc.want)
		}
		for i, o := range page.Objects {
			want := len(content(o.Key, 10*slices.Index(listKeys, o.Key)))
			if o.ETag != etags[o.Key] || o.Size != int64(want) {
				t.Errorf("List(%q)[%d] = %+v, want ETag %q size %d", tc.prefix, i, o, etags[o.Key], want)
			}
		}
	}
}

func testListPages(t *testing.T, b remote.Backend) {
	var keys []string
	for i := range 23 {
		keys = append(keys, fmt.Sprintf("pages/%c/%02d", 'a'+i%3, i))
	}
	keys = append(keys, "pagesx", "other")
	for _, key := range keys {
		put(t, b, key, []byte(key))
	}
	want := sorted(keys[:23])
	for _, limit := range []int{1, 2, 5, 22, 23, 24} {
		if got := listAll(t, b, "pages/", limit); !equal(got, want) {
			t.Fatalf("List(pages/) in pages of %d = %q\nwant %q", limit, got, want)
		}
	}
	page, err := b.List(context.Background(), "pages/", want[10], 3)
	if err != nil {
		t.Fatalf("List after %q: %v", want[10], err)
	}
	if got := keysOf(page); !equal(got, want[11:14]) || page.Next != want[13] {
		t.Fatalf("List after %q = %q next %q, want %q next %q", want[10], got, page.Next, want[11:14], want[13])
	}
}

// listAll follows pages of limit objects and checks that each page but the
// last is full.
func listAll(t *testing.T, b remote.Backend, prefix string, limit int) []string {
	t.Helper()
	var keys []string
	after := ""
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatalf("List(%q) does not end", prefix)
		}
		page, err := b.List(context.Background(), prefix, after, limit)
		if err != nil {
			t.Fatalf("List(%q, after %q, %d): %v", prefix, after, limit, err)
		}
		keys = append(keys, keysOf(page)...)
		if page.Next == "" {
			return keys
		}
		if limit > 0 && len(page.Objects) != limit {
			t.Fatalf("List(%q, after %q, %d) = %d objects with Next %q", prefix, after, limit, len(page.Objects), page.Next)
		}
		after = page.Next
	}
}

func keysOf(p remote.ListPage) []string {
	var keys []string
	for _, o := range p.Objects {
		keys = append(keys, o.Key)
	}
	return keys
}

func sorted(keys []string) []string {
	s := slices.Clone(keys)
	slices.Sort(s)
	return s
}

func equal(a, b []string) bool { return slices.Equal(a, b) }
