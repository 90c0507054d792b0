package index

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/ckpt/ckpt/objects"
)

// tableBytes is the size of the index's live tables.
func tableBytes(db *DB) int64 { return db.pdb.Metrics().Total().TablesSize }

// Compact leaves on disk only what the index still holds: records a
// committed batch deleted leave the tables, and what stays reads back.
func TestCompactDropsDeletedRecords(t *testing.T) {
	dir := t.TempDir()
	db := openTest(t, dir)
	defer db.Close()
	rng := rand.New(rand.NewPCG(3, 3))
	trees := make([]objects.ID, 400)
	commit(t, db, func(b *Batch) {
		for i := range trees {
			trees[i], _ = b.PutTree(randomTree(rng, fmt.Sprint(i), 40))
		}
	})
	if err := db.pdb.Flush(); err != nil {
		t.Fatal(err)
	}
	full := tableBytes(db)
	commit(t, db, func(b *Batch) {
		for _, id := range trees[1:] {
			b.DeleteTree(id)
		}
	})
	if err := db.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	if after := tableBytes(db); after*20 > full {
		t.Fatalf("tables of %d bytes after deleting all trees but one and compacting; %d before", after, full)
	}
	if _, err := db.StoredTree(trees[0]); err != nil {
		t.Fatalf("the tree kept, read from the tables: %v", err)
	}
	if _, err := db.StoredTree(trees[1]); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a deleted tree: %v", err)
	}
}

// Compact refuses a read-only index.
func TestCompactNeedsAWritableIndex(t *testing.T) {
	dir := t.TempDir()
	openTest(t, dir).Close()
	db, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Compact(context.Background()); !errors.Is(err, pebble.ErrReadOnly) {
		t.Fatalf("Compact of a read-only index: %v", err)
	}
}
