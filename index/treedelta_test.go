package index

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/objects"
)

// randomEntry is an entry named name with random fields drawn from rng.
func randomEntry(rng *rand.Rand, name string) objects.Entry {
	e := objects.Entry{Name: name, Kind: objects.Kind(1 + rng.IntN(3)), Mode: uint32(rng.IntN(0o1000))}
	if e.Kind != objects.KindDir {
		e.Size = rng.Int64N(1 << 40)
	}
	e.ID = testID(fmt.Sprint(rng.Uint64()))
	return e
}

// randomTree is a tree of n random entries named prefix00, prefix01, ...
func randomTree(rng *rand.Rand, prefix string, n int) objects.Tree {
	var t objects.Tree
	for i := range n {
		t.Entries = append(t.Entries, randomEntry(rng, fmt.Sprintf("%s%02d", prefix, i)))
	}
	return t
}

// editTree returns t with a few random edits: entries removed, changed
// (one field or all) and added, sometimes none at all.
func editTree(rng *rand.Rand, t objects.Tree) objects.Tree {
	byName := map[string]objects.Entry{}
	for _, e := range t.Entries {
		byName[e.Name] = e
	}
	for range rng.IntN(4) {
		names := make([]string, 0, len(byName))
		for n := range byName {
			names = append(names, n)
		}
		slices.Sort(names)
		switch op := rng.IntN(4); {
		case op == 0 || len(names) == 0:
			name := fmt.Sprintf("f%03d.go", rng.IntN(300))
			byName[name] = randomEntry(rng, name)
		case op == 1:
			delete(byName, names[rng.IntN(len(names))])
		case op == 2:
			e := byName[names[rng.IntN(len(names))]]
			e.ID = testID(fmt.Sprint(rng.Uint64()))
			byName[e.Name] = e
		default:
			name := names[rng.IntN(len(names))]
			byName[name] = randomEntry(rng, name)
		}
	}
	var out objects.Tree
	for _, e := range byName {
		out.Entries = append(out.Entries, e)
	}
	slices.SortFunc(out.Entries, func(a, b objects.Entry) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// storedDepth is the depth of tree id's stored value (0: full).
func storedDepth(t *testing.T, db *DB, id objects.ID) uint64 {
	t.Helper()
	v, ok, err := db.rawTree(id)
	if err != nil || !ok {
		t.Fatalf("raw tree %s: %v, %v", id.Short(), ok, err)
	}
	if !isTreeDelta(v) {
		return 0
	}
	d, err := decodeTreeDelta(v)
	if err != nil {
		t.Fatalf("tree %s: %v", id.Short(), err)
	}
	return d.depth
}

// A directory's history of random edits, each version stored against the
// previous one, reads back version for version (and after reopening), in
// chains no longer than MaxTreeDeltaDepth, much smaller than stored whole.
func TestTreeDeltaRandomHistory(t *testing.T) {
	dir := t.TempDir()
	db := openTest(t, dir)
	rng := rand.New(rand.NewPCG(24, 1))
	cur := randomTree(rng, "f", 40)
	trees := map[objects.ID]objects.Tree{}
	var order []objects.ID
	var prev objects.ID
	stored, whole := 0, 0
	for range 400 {
		var id objects.ID
		commit(t, db, func(b *Batch) {
			var err error
			if id, err = b.PutTreeAgainst(cur, prev); err != nil {
				t.Fatal(err)
			}
		})
		if _, seen := trees[id]; !seen {
			v, _, _ := db.rawTree(id)
			enc, _ := EncodeTree(cur)
			stored, whole = stored+len(v), whole+len(enc)
			order = append(order, id)
		}
		trees[id], prev = cur, id
		if d := storedDepth(t, db, id); d > MaxTreeDeltaDepth {
			t.Fatalf("tree %s stored at depth %d", id.Short(), d)
		}
		cur = editTree(rng, cur)
	}
	check := func() {
		for _, id := range order {
			got, err := db.Tree(id)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Entries, trees[id].Entries) && len(got.Entries)+len(trees[id].Entries) > 0 {
				t.Fatalf("tree %s read back differs", id.Short())
			}
		}
	}
	check()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openTest(t, dir)
	defer db.Close()
	check()
	if stored*4 > whole {
		t.Fatalf("history stored in %d bytes, %d whole; want deltas at most a quarter", stored, whole)
	}
}

// One-entry edits chain up to MaxTreeDeltaDepth deltas; the version after
// a full chain goes on against the tree at rebaseDepth on it. Edits among
// a few hot entries never need a whole tree again; edits that reach a new
// entry each time store one whole once their changes since that tree come
// to half of it. Every version reads back.
func TestTreeDeltaChainBound(t *testing.T) {
	for _, c := range []struct {
		name  string
		hot   int  // entries the edits cycle through
		whole bool // a version after the first is stored whole
	}{{"three hot entries", 3, false}, {"every entry in turn", 30, true}} {
		t.Run(c.name, func(t *testing.T) {
			db := openTest(t, t.TempDir())
			defer db.Close()
			rng := rand.New(rand.NewPCG(7, 7))
			cur := randomTree(rng, "n", 30)
			versions := map[objects.ID]objects.Tree{}
			var prev objects.ID
			sawWhole := false
			for i := range 6 * (MaxTreeDeltaDepth + 1) {
				cur = objects.Tree{Entries: slices.Clone(cur.Entries)} // the batch keeps what it is given
				cur.Entries[i%c.hot].ID = testID(fmt.Sprint("version ", i))
				var id objects.ID
				commit(t, db, func(b *Batch) { id, _ = b.PutTreeAgainst(cur, prev) })
				versions[id] = cur
				got := storedDepth(t, db, id)
				switch {
				case got > MaxTreeDeltaDepth:
					t.Fatalf("version %d stored at depth %d", i, got)
				case i > 0 && got == 0:
					sawWhole = true
				case i <= MaxTreeDeltaDepth && got != uint64(i):
					t.Fatalf("version %d stored at depth %d, want %d", i, got, i)
				case !c.whole && i > MaxTreeDeltaDepth && got != rebaseDepth+1+uint64(i-MaxTreeDeltaDepth-1)%(MaxTreeDeltaDepth-rebaseDepth):
					t.Fatalf("version %d stored at depth %d, want the chain to go on from depth %d", i, got, rebaseDepth)
				}
				prev = id
			}
			if sawWhole != c.whole {
				t.Fatalf("a later version stored whole: %v, want %v", sawWhole, c.whole)
			}
			for id, want := range versions {
				got, err := db.Tree(id)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got.Entries, want.Entries) {
					t.Fatalf("tree %s read back differs", id.Short())
				}
			}
		})
	}
}

// A version after a full chain whose records below the top are damaged
// (the top itself still read from the memo) is stored whole and reads
// back: the damage is left for verify to report, and nothing is written
// against it.
func TestRebaseOverDamagedChainStoresWhole(t *testing.T) {
	for name, damage := range map[string]func(db *DB, mid objects.ID, d treeDelta) error{
		"record deleted": func(db *DB, mid objects.ID, _ treeDelta) error { return db.pdb.Delete(idKey(prefixTree, mid), nil) },
		"header garbage": func(db *DB, mid objects.ID, _ treeDelta) error {
			return db.pdb.Set(idKey(prefixTree, mid), []byte{treeDeltaTag, 3}, nil)
		},
		"depth not below": func(db *DB, mid objects.ID, d treeDelta) error {
			d.depth = MaxTreeDeltaDepth + 1
			return setDelta(db, mid, &d)
		},
	} {
		t.Run(name, func(t *testing.T) {
			db := openTest(t, t.TempDir())
			defer db.Close()
			rng := rand.New(rand.NewPCG(9, 9))
			cur := randomTree(rng, "n", 30)
			var ids []objects.ID
			var prev objects.ID
			for i := range MaxTreeDeltaDepth + 2 {
				cur = objects.Tree{Entries: slices.Clone(cur.Entries)}
				cur.Entries[i%3].ID = testID(fmt.Sprint("version ", i))
				commit(t, db, func(b *Batch) { prev, _ = b.PutTreeAgainst(cur, prev) })
				ids = append(ids, prev)
				if i == MaxTreeDeltaDepth {
					mid := ids[rebaseDepth+2]
					v, _, _ := db.rawTree(mid)
					d, err := decodeTreeDelta(v)
					if err == nil {
						err = damage(db, mid, d)
					}
					if err != nil {
						t.Fatal(err)
					}
				}
			}
			if d := storedDepth(t, db, prev); d != 0 {
				t.Fatalf("the version after the damaged chain stored at depth %d, want whole", d)
			}
			if got, err := db.StoredTree(prev); err != nil || !reflect.DeepEqual(got.Entries, cur.Entries) {
				t.Fatalf("it reads back %v, %v", got.Entries, err)
			}
		})
	}
}

// A tree the index holds is not stored again, against another base (which
// could close a chain into a loop) or whole against itself; a missing
// base, or a delta not clearly smaller, stores the tree whole.
func TestPutTreeAgainstFallsBackToWhole(t *testing.T) {
	db := openTest(t, t.TempDir())
	defer db.Close()
	rng := rand.New(rand.NewPCG(3, 3))
	a := randomTree(rng, "n", 20)
	b := objects.Tree{Entries: slices.Clone(a.Entries)}
	b.Entries[0].ID = testID("changed")
	put := func(t2 objects.Tree, base objects.ID) (id objects.ID) {
		commit(t, db, func(bt *Batch) {
			var err error
			if id, err = bt.PutTreeAgainst(t2, base); err != nil {
				t.Fatal(err)
			}
		})
		return id
	}
	aID := put(a, testID("no such tree"))
	if d := storedDepth(t, db, aID); d != 0 {
		t.Fatalf("against a missing base: depth %d, want a full value", d)
	}
	bID := put(b, aID)
	if d := storedDepth(t, db, bID); d != 1 {
		t.Fatalf("one entry changed: depth %d, want a delta", d)
	}
	if put(a, bID); storedDepth(t, db, aID) != 0 {
		t.Fatal("a stored tree was stored again as a delta of its own delta")
	}
	if put(b, bID); storedDepth(t, db, bID) != 1 {
		t.Fatal("a tree stored as a delta was stored again whole when given as its own base")
	}
	small := objects.Tree{Entries: a.Entries[:1]}
	smallID := put(small, aID)
	other := objects.Tree{Entries: []objects.Entry{randomEntry(rng, "zz")}}
	if id := put(other, smallID); storedDepth(t, db, id) != 0 {
		t.Fatal("a delta no smaller than the tree was stored")
	}
	var bases []objects.ID
	if err := db.EachTreeBase(func(id, base objects.ID) error {
		if id == bID {
			bases = append(bases, base)
		} else if !base.IsZero() {
			bases = append(bases, objects.ID{})
		}
		return nil
	}); err != nil || !slices.Equal(bases, []objects.ID{aID}) {
		t.Fatalf("EachTreeBase: %v, %v; want only %s, a delta of %s", bases, err, bID.Short(), aID.Short())
	}
}

// PutTreeFamily replaces the records of trees that were deltas of
// another: the first whole, each other one a delta of the first when that
// is smaller, else whole (a tree unlike it, or the first given again).
// Every tree reads back from its records.
func TestPutTreeFamilyStoresTheOthersAgainstTheFirst(t *testing.T) {
	db := openTest(t, t.TempDir())
	defer db.Close()
	rng := rand.New(rand.NewPCG(4, 4))
	base := randomTree(rng, "n", 20)
	version := func(name string) objects.Tree {
		v := objects.Tree{Entries: slices.Clone(base.Entries)}
		v.Entries[1].ID = testID(name)
		return v
	}
	a, b, far := version("a"), version("b"), randomTree(rng, "z", 20)
	var baseID, aID, bID, farID objects.ID
	commit(t, db, func(bt *Batch) { baseID, _ = bt.PutTree(base) })
	commit(t, db, func(bt *Batch) {
		aID, _ = bt.PutTreeAgainst(a, baseID)
		bID, _ = bt.PutTreeAgainst(b, baseID)
		farID, _ = bt.PutTree(far)
	})
	if storedDepth(t, db, aID) != 1 || storedDepth(t, db, bID) != 1 {
		t.Fatal("the fixture's versions are not deltas of their base")
	}
	commit(t, db, func(bt *Batch) {
		if err := bt.PutTreeFamily([]objects.Tree{a, b, far, a}); err != nil {
			t.Fatal(err)
		}
	})
	for id, want := range map[objects.ID]uint64{aID: 0, bID: 1, farID: 0} {
		if got := storedDepth(t, db, id); got != want {
			t.Fatalf("tree %s stored at depth %d, want %d", id.Short(), got, want)
		}
	}
	if v, _, _ := db.rawTree(bID); !isTreeDelta(v) {
		t.Fatal("the near version is not a delta")
	} else if _, got, _ := treeDeltaHeader(v); got != aID {
		t.Fatalf("the near version is a delta of %s, want the first, %s", got.Short(), aID.Short())
	}
	for id, want := range map[objects.ID]objects.Tree{baseID: base, aID: a, bID: b, farID: far} {
		if got, err := db.StoredTree(id); err != nil || !reflect.DeepEqual(got.Entries, want.Entries) {
			t.Fatalf("tree %s reads back %v, %v", id.Short(), got.Entries, err)
		}
	}
}

// Damage anywhere on a chain makes reading the tree at its top from the
// records fail with objects.ErrCorrupt naming that tree, not ErrNotFound
// and not a wrong tree: through StoredTree at once, and through Tree once
// the index is opened again (an open DB answers Tree from the trees it
// committed).
func TestTreeDeltaDamage(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	v0 := randomTree(rng, "n", 20)
	v1 := objects.Tree{Entries: slices.Clone(v0.Entries)}
	v1.Entries[3].ID = testID("v1")
	v2 := objects.Tree{Entries: slices.Clone(v1.Entries[1:])}
	id0, _ := TreeID(v0)
	id1, _ := TreeID(v1)
	id2, _ := TreeID(v2)
	other := objects.Tree{Entries: slices.Clone(v0.Entries)}
	other.Entries[5].Size++
	otherEnc, _ := EncodeTree(other)
	cases := map[string]func(db *DB) error{
		"base deleted":    func(db *DB) error { return db.pdb.Delete(idKey(prefixTree, id0), nil) },
		"base replaced":   func(db *DB) error { return db.pdb.Set(idKey(prefixTree, id0), otherEnc, nil) },
		"base garbage":    func(db *DB) error { return db.pdb.Set(idKey(prefixTree, id0), []byte("\x01garbage"), nil) },
		"delta garbage":   func(db *DB) error { return db.pdb.Set(idKey(prefixTree, id1), []byte("\x02garbage"), nil) },
		"delta truncated": func(db *DB) error { return truncateValue(db, id2) },
		"delta bit flip":  func(db *DB) error { return flipLastByte(db, id2) },
		"chain loops":     func(db *DB) error { return loopChain(db, id0, id2) },
		"removes a stray": func(db *DB) error {
			return setDelta(db, id2, &treeDelta{depth: 2, base: id1, removed: []string{"zzz"}})
		},
		"depth not below": func(db *DB) error {
			return setDelta(db, id1, &treeDelta{depth: 5, base: id0, upserts: v1.Entries[3:4]})
		},
		"remove and upsert": func(db *DB) error {
			return setDelta(db, id2, &treeDelta{depth: 2, base: id1, removed: []string{v1.Entries[0].Name}, upserts: v1.Entries[0:1]})
		},
	}
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			db := openTest(t, dir)
			var prev objects.ID
			for _, v := range []objects.Tree{v0, v1, v2} {
				commit(t, db, func(b *Batch) { prev, _ = b.PutTreeAgainst(v, prev) })
			}
			if storedDepth(t, db, id2) != 2 {
				t.Fatal("the fixture is not a chain of two deltas")
			}
			if err := damage(db); err != nil {
				t.Fatal(err)
			}
			wantDamage := func(how string, err error) {
				t.Helper()
				if !errors.Is(err, objects.ErrCorrupt) || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "tree/"+id2.String()) {
					t.Fatalf("%s after damage: %v; want ErrCorrupt naming the tree", how, err)
				}
			}
			_, err := db.StoredTree(id2)
			wantDamage("StoredTree", err)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db = openTest(t, dir)
			defer db.Close()
			_, err = db.Tree(id2)
			wantDamage("Tree, reopened", err)
		})
	}
}

func setDelta(db *DB, id objects.ID, d *treeDelta) error {
	v, err := appendTreeDelta(nil, d)
	if err != nil {
		return err
	}
	return db.pdb.Set(idKey(prefixTree, id), v, nil)
}

func truncateValue(db *DB, id objects.ID) error {
	v, _, err := db.rawTree(id)
	if err != nil {
		return err
	}
	return db.pdb.Set(idKey(prefixTree, id), v[:len(v)-3], nil)
}

func flipLastByte(db *DB, id objects.ID) error {
	v, _, err := db.rawTree(id)
	if err != nil {
		return err
	}
	v[len(v)-1] ^= 0x40
	return db.pdb.Set(idKey(prefixTree, id), v, nil)
}

// loopChain stores the chain's full base as a delta of its top.
func loopChain(db *DB, base, top objects.ID) error {
	return setDelta(db, base, &treeDelta{depth: 3, base: top})
}
