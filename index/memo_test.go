package index

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ckpt/ckpt/objects"
)

// A tree a batch committed, or one resolved once, is answered from memory:
// Tree returns it even after its record is damaged behind the index's
// back, while StoredTree reads the records and reports the damage. Tree's
// caller owns what it gets; SharedTree hands out the memory's own entries.
func TestTreeAnswersCommittedTreesFromMemory(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	v0 := randomTree(rng, "n", 30)
	v1 := objects.Tree{Entries: slices.Clone(v0.Entries)}
	v1.Entries[4].ID = testID("v1")
	db := openTest(t, t.TempDir())
	defer db.Close()
	var id0, id1 objects.ID
	commit(t, db, func(b *Batch) { id0, _ = b.PutTree(v0) })
	commit(t, db, func(b *Batch) { id1, _ = b.PutTreeAgainst(v1, id0) })
	if storedDepth(t, db, id1) != 1 {
		t.Fatal("the fixture is not a delta")
	}
	if err := db.pdb.Set(idKey(prefixTree, id0), []byte("\x01garbage"), nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id   objects.ID
		want objects.Tree
	}{{id0, v0}, {id1, v1}} {
		got, err := db.Tree(c.id)
		if err != nil || !slices.Equal(got.Entries, c.want.Entries) {
			t.Fatalf("Tree(%s) after damage: %v; want the committed tree", c.id.Short(), err)
		}
		got.Entries[0].Name = "changed by the caller"
		if again, _ := db.Tree(c.id); !slices.Equal(again.Entries, c.want.Entries) {
			t.Fatalf("Tree(%s) returned the cache's own entries", c.id.Short())
		}
		if _, err := db.StoredTree(c.id); !errors.Is(err, objects.ErrCorrupt) {
			t.Fatalf("StoredTree(%s) after damage: %v; want ErrCorrupt", c.id.Short(), err)
		}
		shared, err := db.SharedTree(c.id)
		if err != nil || !slices.Equal(shared.Entries, c.want.Entries) {
			t.Fatalf("SharedTree(%s) after damage: %v; want the committed tree", c.id.Short(), err)
		}
		if n := testing.AllocsPerRun(10, func() { _, _ = db.SharedTree(c.id) }); n != 0 {
			t.Errorf("SharedTree(%s) allocated %v times; want the memory's entries, not a copy", c.id.Short(), n)
		}
	}
	if _, err := db.SharedTree(testID("absent")); !errors.Is(err, ErrNotFound) {
		t.Errorf("SharedTree of an absent tree: %v; want ErrNotFound", err)
	}
}

// The cache follows committed deletions and rewrites: a deleted tree is
// not found, a delta rewritten whole is a base of depth 0 again, and a
// batch that is closed without commit changes nothing.
func TestTreeMemoFollowsCommits(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	v0 := randomTree(rng, "n", 30)
	v1 := objects.Tree{Entries: slices.Clone(v0.Entries)}
	v1.Entries[2].ID = testID("v1")
	v2 := objects.Tree{Entries: slices.Clone(v1.Entries)}
	v2.Entries[9].ID = testID("v2")
	db := openTest(t, t.TempDir())
	defer db.Close()
	var id0, id1, id2 objects.ID
	commit(t, db, func(b *Batch) { id0, _ = b.PutTree(v0) })
	commit(t, db, func(b *Batch) { id1, _ = b.PutTreeAgainst(v1, id0) })

	// gc's way: the delta stored whole, its base deleted.
	commit(t, db, func(b *Batch) {
		_, _ = b.PutTree(v1)
		b.DeleteTree(id0)
	})
	if _, err := db.Tree(id0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Tree of a deleted tree: %v; want ErrNotFound", err)
	}
	commit(t, db, func(b *Batch) { id2, _ = b.PutTreeAgainst(v2, id1) })
	if d := storedDepth(t, db, id2); d != 1 {
		t.Fatalf("a delta of a tree rewritten whole has depth %d; want 1", d)
	}

	b := db.NewBatch()
	b.DeleteTree(id2)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := db.Tree(id2); err != nil || !slices.Equal(got.Entries, v2.Entries) {
		t.Fatalf("Tree after an uncommitted deletion: %v", err)
	}
}

// The stat-cache memo follows committed writes and deletions, a subtree's
// too, and a batch closed without commit changes nothing; what it answers
// is what a fresh DB reads from the records.
func TestDirCacheMemoFollowsCommits(t *testing.T) {
	dir := t.TempDir()
	db := openTest(t, dir)
	dc := func(n int64) DirCache { return DirCache{WrittenNs: n} }
	for _, d := range []string{"a", "a/b", "a/b/c", "ab", "z"} {
		if _, ok, err := db.DirCache(d); ok || err != nil { // an absence, which the memo does not keep
			t.Fatalf("DirCache(%q) before any commit: %v, %v", d, ok, err)
		}
	}
	commit(t, db, func(b *Batch) {
		for i, d := range []string{"a", "a/b", "a/b/c", "ab", "z"} {
			b.PutDirCache(d, dc(int64(i+1)))
		}
	})
	for _, d := range []string{"a", "a/b", "ab"} { // into the memo
		if _, ok, err := db.DirCache(d); !ok || err != nil {
			t.Fatalf("DirCache(%q): %v, %v", d, ok, err)
		}
	}
	commit(t, db, func(b *Batch) {
		b.DeleteDirCacheTree("a")
		b.PutDirCache("z", dc(9))
	})
	b := db.NewBatch()
	b.PutDirCache("ab", dc(10))
	b.DeleteDirCache("z")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"a": 0, "a/b": 0, "a/b/c": 0, "ab": 4, "z": 9}
	check := func(db *DB, how string) {
		t.Helper()
		for d, n := range want {
			got, ok, err := db.DirCache(d)
			if err != nil || ok != (n != 0) || got.WrittenNs != n {
				t.Fatalf("%s: DirCache(%q) = %d, %v, %v; want %d", how, d, got.WrittenNs, ok, err, n)
			}
			if has, err := db.HasDirCache(d); err != nil || has != (n != 0) {
				t.Fatalf("%s: HasDirCache(%q) = %v, %v", how, d, has, err)
			}
		}
	}
	check(db, "open DB")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openTest(t, dir)
	defer db.Close()
	check(db, "reopened")
}

// A read that began before a commit does not enter the memo: it may hold
// what the commit replaced. One that began after it does.
func TestMemoSkipsReadsOlderThanACommit(t *testing.T) {
	m := newMemo[string](100, func(v int) int { return 1 })
	overtaken := func(k string, committed, read int) func() (int, bool, error) {
		return func() (int, bool, error) {
			m.follow(func(w memoWrites[string, int]) { w.put(k, committed) })
			return read, true, nil
		}
	}
	if v, _, _ := m.read("k", overtaken("k", 2, 1)); v != 1 {
		t.Fatalf("read returned %d, not what it loaded", v)
	}
	if v, _ := m.get("k"); v != 2 {
		t.Fatalf("a read older than a commit replaced its write: %d", v)
	}
	m.read("j", overtaken("other", 3, 1))
	if _, ok := m.get("j"); ok {
		t.Fatal("a read older than a commit entered the memo")
	}
	m.read("j", func() (int, bool, error) { return 1, true, nil })
	if v, ok := m.get("j"); !ok || v != 1 {
		t.Fatal("a read after the last commit did not enter the memo")
	}
	if v, _, _ := m.read("j", func() (int, bool, error) { return 9, true, nil }); v != 1 {
		t.Fatalf("a read of a remembered key loaded it again: %d", v)
	}
}

// The memo holds at most its budget, evicting the oldest values first, and
// slots of replaced values do not pile up.
func TestMemoStaysWithinItsBudget(t *testing.T) {
	const budget = 50
	m := newMemo[string](budget, func(v int) int { return v })
	put := func(k string, v int) { m.follow(func(w memoWrites[string, int]) { w.put(k, v) }) }
	for i := range 40 {
		put(fmt.Sprint(i), 5)
		if m.total > budget {
			t.Fatalf("after %d values the memo costs %d, over its budget %d", i+1, m.total, budget)
		}
	}
	if _, ok := m.get("0"); ok {
		t.Fatal("the oldest value was not evicted")
	}
	if _, ok := m.get("39"); !ok {
		t.Fatal("the newest value was evicted")
	}
	for range 1000 {
		put("39", 1)
	}
	if n := len(m.order) - m.head; n > 2*len(m.vals)+64 {
		t.Fatalf("%d slots for %d values", n, len(m.vals))
	}
	// A memo that keeps evicting its oldest values (a server's, over
	// weeks) holds a few slots per value, not one per put it ever saw.
	for i := range 100_000 {
		put(fmt.Sprint("churn", i), 5)
	}
	if len(m.order) > 4*len(m.vals)+128 || cap(m.order) > 8*len(m.vals)+256 {
		t.Fatalf("after 100,000 puts the memo keeps %d slots (capacity %d) for %d values", len(m.order), cap(m.order), len(m.vals))
	}
	put("big", budget+1)
	if _, ok := m.get("big"); ok || m.total > budget {
		t.Fatalf("a value over the budget was kept (cost %d)", m.total)
	}
}

// A locator read is answered from memory, even after its record is
// damaged behind the index's back, until a committed batch writes or
// deletes it; a batch closed without commit changes nothing, and an
// absence is not remembered.
func TestLocatorMemoFollowsCommits(t *testing.T) {
	db := openTest(t, t.TempDir())
	defer db.Close()
	id := testID("blob")
	if _, ok, err := db.Locator(id); ok || err != nil {
		t.Fatalf("Locator before any commit: %v, %v", ok, err)
	}
	v1 := objects.Locator{Pack: 1, Offset: 10, Length: 100, Size: 90}
	v2 := objects.Locator{Pack: 2, Offset: 20, Length: 200, Size: 90}
	commit(t, db, func(b *Batch) { b.PutLocator(id, v1) })
	want := func(what string, loc objects.Locator, found bool) {
		t.Helper()
		got, ok, err := db.Locator(id)
		if err != nil || ok != found || got != loc {
			t.Fatalf("%s: Locator = %+v, %v, %v; want %+v, %v", what, got, ok, err, loc, found)
		}
	}
	want("committed", v1, true)
	if err := db.pdb.Set(idKey(prefixLocator, id), []byte("garbage"), nil); err != nil {
		t.Fatal(err)
	}
	want("read once, then damaged on disk", v1, true)

	b := db.NewBatch()
	b.PutLocator(id, v2)
	b.Close()
	want("after an uncommitted batch", v1, true)

	commit(t, db, func(b *Batch) { b.PutLocator(id, v2) })
	want("rewritten", v2, true)
	commit(t, db, func(b *Batch) { b.DeleteLocator(id) })
	want("deleted", objects.Locator{}, false)
}
