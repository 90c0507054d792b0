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
// back, while StoredTree reads the records and reports the damage. Either
// way the caller owns what it gets.
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
	}
}

// The cache follows committed deletions and rewrites: a deleted tree is
// not found, a delta rewritten whole is a base of depth 0 again, and a
// batch that is closed without commit changes nothing.
func TestTreeCacheFollowsCommits(t *testing.T) {
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

// A resolution that began before a committed deletion does not bring what
// it read back into the cache.
func TestTreeCacheSkipsResolutionsOlderThanADeletion(t *testing.T) {
	c := newTreeCache(100)
	id := testID("t")
	gen := c.generation()
	c.follow([]treeWrite{{id: id, deleted: true}})
	c.putUnlessDropped(gen, id, []objects.Entry{{Name: "a"}}, 0)
	if _, _, ok := c.get(id); ok {
		t.Fatal("a resolution older than a deletion entered the cache")
	}
	c.putUnlessDropped(c.generation(), id, []objects.Entry{{Name: "a"}}, 0)
	if _, _, ok := c.get(id); !ok {
		t.Fatal("a resolution after the deletion did not enter the cache")
	}
}

// The cache holds at most its budget, evicting the oldest trees first, and
// slots of replaced trees do not pile up.
func TestTreeCacheStaysWithinItsBudget(t *testing.T) {
	const budget = 50
	c := newTreeCache(budget)
	entries := func(n int) []objects.Entry { return make([]objects.Entry, n) }
	for i := range 40 {
		c.follow([]treeWrite{{id: testID(fmt.Sprint(i)), entries: entries(4)}})
		if c.cost > budget {
			t.Fatalf("after %d trees the cache costs %d, over its budget %d", i+1, c.cost, budget)
		}
	}
	if _, _, ok := c.get(testID("0")); ok {
		t.Fatal("the oldest tree was not evicted")
	}
	if _, _, ok := c.get(testID("39")); !ok {
		t.Fatal("the newest tree was evicted")
	}
	for range 1000 {
		c.follow([]treeWrite{{id: testID("39"), entries: entries(1)}})
	}
	if n := len(c.order) - c.head; n > 2*len(c.trees)+64 {
		t.Fatalf("%d slots for %d trees", n, len(c.trees))
	}
	c.follow([]treeWrite{{id: testID("big"), entries: entries(budget)}})
	if _, _, ok := c.get(testID("big")); ok || c.cost > budget {
		t.Fatalf("a tree over the budget was kept (cost %d)", c.cost)
	}
}
