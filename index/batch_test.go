package index

import (
	"strings"
	"testing"

	"github.com/ckpt/ckpt/objects"
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

func TestLoadDirCachesMatchesLookups(t *testing.T) {
	db := openTest(t, t.TempDir())
	defer db.Close()
	want := DirCache{WrittenNs: 42, Entries: []CachedFile{{Name: "a", Size: 1, MtimeNs: 2, CtimeNs: 3, Inode: 4, Mode: 0o100644}}}
	commit(t, db, func(b *Batch) {
		b.PutDirCache("", want)
		b.PutDirCache("src/lib", DirCache{WrittenNs: 7})
	})
	set, err := db.LoadDirCaches()
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"", "src/lib", "missing"} {
		got, ok, err := set.Get(dir)
		one, ok1, err1 := db.DirCache(dir)
		if err != nil || err1 != nil || ok != ok1 || got.WrittenNs != one.WrittenNs || len(got.Entries) != len(one.Entries) {
			t.Fatalf("%q: set %v %v %v, lookup %v %v %v", dir, got, ok, err, one, ok1, err1)
		}
	}
	if got, _, _ := set.Get(""); got.Entries[0] != want.Entries[0] {
		t.Fatalf("root entry = %+v", got.Entries[0])
	}
}

func TestReadOnlyOpenReadsButRefusesWrites(t *testing.T) {
	dir := t.TempDir()
	db := openTest(t, dir)
	commit(t, db, func(b *Batch) { b.SetConfig("k", "v") })
	db.Close()
	ro, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if v, ok, err := ro.Config("k"); err != nil || !ok || v != "v" {
		t.Fatalf("read-only read = %q %v %v", v, ok, err)
	}
	b := ro.NewBatch()
	defer b.Close()
	b.SetConfig("k", "w")
	if err := b.Commit(); err == nil {
		t.Fatal("a read-only index accepted a commit")
	}
}

func TestHasLocators(t *testing.T) {
	db := openTest(t, t.TempDir())
	defer db.Close()
	commit(t, db, func(b *Batch) { b.PutDirCache("", DirCache{WrittenNs: 1}) })
	if has, err := db.HasLocators(); has || err != nil {
		t.Fatalf("empty index: HasLocators = %v, %v", has, err)
	}
	commit(t, db, func(b *Batch) {
		b.PutLocator(objects.Sum([]byte("x")), objects.Locator{Pack: 1, Offset: 12, Length: 60, Size: 1})
	})
	if has, err := db.HasLocators(); !has || err != nil {
		t.Fatalf("after a locator: HasLocators = %v, %v", has, err)
	}
}
