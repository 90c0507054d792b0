package index

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/internal/faultfs"
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

// An unsynced commit is visible at once; a power cut keeps all of it or
// none, and the next synced commit makes it durable with its own writes.
func TestCommitUnsyncedIsKeptWholeOrLostWhole(t *testing.T) {
	for seed := range uint64(8) {
		mem := faultfs.NewMem()
		dir := filepath.Join(string(filepath.Separator), "index")
		db, err := Open(dir, Options{FS: mem})
		if err != nil {
			t.Fatal(err)
		}
		b := db.NewBatch()
		for i := range 200 {
			b.SetConfig(fmt.Sprintf("unsynced-%03d", i), strings.Repeat("x", 100))
		}
		if err := b.CommitUnsynced(); err != nil {
			t.Fatal(err)
		}
		b.Close()
		if _, ok, err := db.Config("unsynced-199"); err != nil || !ok {
			t.Fatalf("seed %d: an unsynced commit is not visible: %v %v", seed, ok, err)
		}
		crash := faultfs.CrashConfig{UnsyncedPercent: 50, Rand: rand.New(rand.NewPCG(seed, 1))}
		if kept := configsAfterCrash(t, mem.Crash(crash), dir); kept != 0 && kept != 200 {
			t.Fatalf("seed %d: a power cut kept %d of the unsynced batch's 200 writes", seed, kept)
		}
		commit(t, db, func(b *Batch) { b.SetConfig("synced", "y") })
		if kept := configsAfterCrash(t, mem.Crash(crash), dir); kept != 201 {
			t.Fatalf("seed %d: after the next synced commit a power cut kept %d writes of 201", seed, kept)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// configsAfterCrash opens the index a crash left and counts its config keys.
func configsAfterCrash(t *testing.T, fsys *faultfs.MemFS, dir string) int {
	t.Helper()
	db, err := Open(dir, Options{FS: fsys})
	if err != nil {
		t.Fatalf("open after the crash: %v", err)
	}
	defer db.Close()
	n := 0
	for i := range 200 {
		if _, ok, err := db.Config(fmt.Sprintf("unsynced-%03d", i)); err != nil {
			t.Fatal(err)
		} else if ok {
			n++
		}
	}
	if _, ok, err := db.Config("synced"); err != nil {
		t.Fatal(err)
	} else if ok {
		n++
	}
	return n
}

// A tree deleted and stored again is written again: what the index
// remembers of trees it read does not outlive their deletion.
func TestPutTreeAgainstStoresADeletedTreeAgain(t *testing.T) {
	db := openTest(t, t.TempDir())
	defer db.Close()
	base := objects.Tree{Entries: []objects.Entry{{Name: "a", Kind: objects.KindFile, Mode: 0o644, ID: objects.Sum([]byte("a"))}}}
	tree := objects.Tree{Entries: append(slices.Clone(base.Entries), objects.Entry{Name: "b", Kind: objects.KindFile, Mode: 0o644, ID: objects.Sum([]byte("b"))})}
	var id objects.ID
	commit(t, db, func(b *Batch) {
		if _, err := b.PutTree(base); err != nil {
			t.Fatal(err)
		}
		var err error
		if id, err = b.PutTree(tree); err != nil {
			t.Fatal(err)
		}
	})
	if _, err := db.Tree(id); err != nil { // read: the index now remembers it
		t.Fatal(err)
	}
	commit(t, db, func(b *Batch) { b.DeleteTree(id) })
	commit(t, db, func(b *Batch) {
		if _, err := b.PutTreeAgainst(tree, objects.Sum([]byte("some base"))); err != nil {
			t.Fatal(err)
		}
	})
	got, err := db.StoredTree(id)
	if err != nil {
		t.Fatalf("the tree stored again after its deletion is not stored: %v", err)
	}
	if len(got.Entries) != 2 || got.Entries[1].Name != "b" {
		t.Fatalf("tree read back = %+v", got)
	}
}

// LocatorsOf answers as Locator does for every id: sorted or not, found or
// not, from tables, the memtable or memory; a damaged value is an error
// naming its key.
func TestLocatorsOfAnswersAsLocator(t *testing.T) {
	db := openTest(t, t.TempDir())
	defer db.Close()
	var ids []objects.ID
	for i := range 300 {
		id := objects.Sum(fmt.Appendf(nil, "blob %d", i))
		ids = append(ids, id)
		if i%3 == 0 {
			continue // absent
		}
		commit(t, db, func(b *Batch) {
			b.PutLocator(id, objects.Locator{Pack: uint32(i), Offset: int64(i) << 10, Length: 100, Size: int64(i)})
		})
		if i == 150 {
			if err := db.pdb.Flush(); err != nil { // the first half in a table, the rest in the memtable
				t.Fatal(err)
			}
		}
	}
	if _, _, err := db.Locator(ids[7]); err != nil { // one answered from memory
		t.Fatal(err)
	}
	sorted := slices.Clone(ids)
	slices.SortFunc(sorted, objects.CompareIDs)
	for name, order := range map[string][]objects.ID{"sorted": sorted, "as made": ids} {
		var got []objects.ID
		err := db.LocatorsOf(order, func(id objects.ID, loc objects.Locator, found bool) error {
			got = append(got, id)
			want, wantFound, err := db.Locator(id)
			if err != nil || found != wantFound || loc != want {
				t.Fatalf("%s: %s = %+v, %v; Locator says %+v, %v, %v", name, id.Short(), loc, found, want, wantFound, err)
			}
			return nil
		})
		if err != nil || !slices.Equal(got, order) {
			t.Fatalf("%s: LocatorsOf called back %d of %d ids in order %v, err %v", name, len(got), len(order), slices.Equal(got, order), err)
		}
	}
	if err := db.pdb.Set(idKey(prefixLocator, ids[1]), []byte("garbage"), nil); err != nil {
		t.Fatal(err)
	}
	db.locators.clear()
	err := db.LocatorsOf(ids[:3], func(objects.ID, objects.Locator, bool) error { return nil })
	if !errors.Is(err, objects.ErrCorrupt) || !strings.Contains(err.Error(), ids[1].Short()) {
		t.Fatalf("LocatorsOf over a damaged value = %v; want a corruption error naming its key", err)
	}
}

func TestConfigsOfAnswersAsConfig(t *testing.T) {
	db := openTest(t, t.TempDir())
	defer db.Close()
	var keys []string
	for i := range 300 {
		key := fmt.Sprintf("sync/origin/b/%s", objects.Sum(fmt.Appendf(nil, "blob %d", i)))
		keys = append(keys, key)
		if i%3 == 0 {
			continue // absent
		}
		commit(t, db, func(b *Batch) { b.SetConfig(key, fmt.Sprintf("value %d", i)) })
		if i == 150 {
			if err := db.pdb.Flush(); err != nil { // the first half in a table, the rest in the memtable
				t.Fatal(err)
			}
		}
	}
	sorted := slices.Clone(keys)
	slices.Sort(sorted)
	for name, order := range map[string][]string{"sorted": sorted, "as made": keys} {
		calls := 0
		err := db.ConfigsOf(order, func(i int, v string, found bool) error {
			if i != calls {
				t.Fatalf("%s: call %d for key %d", name, calls, i)
			}
			calls++
			want, wantFound, err := db.Config(order[i])
			if err != nil || found != wantFound || v != want {
				t.Fatalf("%s: %s = %q, %v; Config says %q, %v, %v", name, order[i], v, found, want, wantFound, err)
			}
			return nil
		})
		if err != nil || calls != len(order) {
			t.Fatalf("%s: ConfigsOf called back %d of %d keys, err %v", name, calls, len(order), err)
		}
	}
	stop := errors.New("stop")
	calls := 0
	if err := db.ConfigsOf(sorted, func(int, string, bool) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("ConfigsOf whose callback fails: %v after %d calls; want that error after one", err, calls)
	}
}
