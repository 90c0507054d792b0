package index

import (
	"strings"
	"testing"
)

func TestDeleteDirCacheTreeRemovesOnlyTheSubtree(t *testing.T) {
	db := openTest(t, t.TempDir())
	defer db.Close()
	commit(t, db, func(b *Batch) {
		for _, d := range []string{"", "a", "a/b", "a/b/c", "a.txt", "a0", "ab", "b"} {
			b.PutDirCache(d, DirCache{WrittenNs: 1})
		}
	})
	commit(t, db, func(b *Batch) { b.DeleteDirCacheTree("a") })
	var left []string
	if err := db.AllDirCaches(func(dir string, _ DirCache) error { left = append(left, dir); return nil }); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(left, ","); got != ",a.txt,a0,ab,b" {
		t.Fatalf("dir caches left = %q", got)
	}
}
