package objects

import (
	"bytes"
	"testing"
)

// countingIndex counts the lookups a batch makes.
type countingIndex struct {
	*mapIndex
	lookups int
}

func (c *countingIndex) Locator(id ID) (Locator, bool, error) {
	c.lookups++
	return c.mapIndex.Locator(id)
}

func TestFreshBatchDedupsAcrossSyncsWithoutLookups(t *testing.T) {
	idx := &countingIndex{mapIndex: newMapIndex()}
	s, err := Open(t.TempDir(), idx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := s.NewFreshBatch()
	defer b.Close()
	a, c := []byte("content a, long enough to be worth storing"), []byte("content c")
	put := func(data []byte) {
		t.Helper()
		if _, _, err := b.Put(bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
	}
	put(a)
	put(a)
	first, err := b.Sync()
	if err != nil || len(first) != 1 {
		t.Fatalf("first sync: %d placements, %v; want 1", len(first), err)
	}
	idx.commit(first)
	put(a) // synced before: not written again
	put(c)
	second, err := b.Sync()
	if err != nil || len(second) != 1 || second[0].ID != Sum(c) {
		t.Fatalf("second sync = %+v, %v; want only c", second, err)
	}
	if ok, err := b.Has(Sum(a)); !ok || err != nil {
		t.Fatalf("Has(a) = %v, %v", ok, err)
	}
	if idx.lookups != 0 {
		t.Fatalf("a fresh batch made %d index lookups", idx.lookups)
	}
	idx.commit(second)
	mustGet(t, s, Sum(a), a)
	mustGet(t, s, Sum(c), c)
}
