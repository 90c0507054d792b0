package maint

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/objects"
)

// TestRecompressOffersNoBasesWhenADeltaHidesItsBase recompresses a
// deferred pack holding two versions of one file, offered each other as
// bases, while a delta record elsewhere cannot be read: RecompressPack
// cannot tell whether that record's base is one of them, so it offers no
// base at all, and both versions stay whole. With the record intact, the
// one moved second becomes a delta of the first.
func TestRecompressOffersNoBasesWhenADeltaHidesItsBase(t *testing.T) {
	for _, damaged := range []bool{false, true} {
		dir := t.TempDir()
		db, err := index.Open(filepath.Join(dir, "index"), index.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		// Packs of 64 KiB: the deferred save fills its own, and the edit
		// goes to another, which the recompression does not move.
		blobs, err := objects.Open(dir, db, objects.Options{Groups: true, PackSize: 64 << 10})
		if err != nil {
			t.Fatal(err)
		}
		defer blobs.Close()
		commit := func(placed []objects.Placement) {
			b := db.NewBatch()
			defer b.Close()
			for _, p := range placed {
				b.PutLocator(p.ID, p.Loc)
			}
			if err := b.Commit(); err != nil {
				t.Fatal(err)
			}
		}
		var text strings.Builder
		for i := range 1500 {
			text.WriteString(strings.Repeat("x", i%37) + " line\n")
		}
		v0 := []byte(text.String())
		v1 := append(bytes.Clone(v0), "one more line\n"...)
		other := bytes.Repeat([]byte("another file\n"), 400)

		deferred := blobs.NewBatch()
		deferred.DeferCompression()
		for _, b := range [][]byte{v0, v1, other} {
			if _, err := deferred.PutBytes(b); err != nil {
				t.Fatal(err)
			}
		}
		placed, err := deferred.Sync()
		deferred.Close()
		if err != nil {
			t.Fatal(err)
		}
		commit(placed)
		// A later save's edit of other: a delta record naming it.
		edit := blobs.NewBatch()
		editID, _, err := edit.PutVersion(bytes.NewReader(append(bytes.Clone(other), "edited\n"...)), objects.Sum(other))
		if err != nil {
			t.Fatal(err)
		}
		placed, err = edit.Sync()
		edit.Close()
		if err != nil {
			t.Fatal(err)
		}
		commit(placed)
		packs, err := blobs.DeferredPacks()
		if err != nil || len(packs) != 1 {
			t.Fatalf("deferred packs %v, %v", packs, err)
		}
		loc, _, err := db.Locator(editID)
		if err != nil || !loc.Delta() || loc.Pack == packs[0] {
			t.Fatalf("the edit is stored at %+v, %v; want a delta outside deferred pack %d", loc, err, packs[0])
		}
		if damaged {
			f, err := os.OpenFile(blobs.PackPath(loc.Pack), os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt([]byte{0xff, 0xff}, loc.Offset+10); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}

		id0, id1 := objects.Sum(v0), objects.Sum(v1)
		s := &Store{Dir: dir, DB: db, Blobs: blobs, Bases: func(id objects.ID) []objects.ID {
			switch id {
			case id0:
				return []objects.ID{id1}
			case id1:
				return []objects.ID{id0}
			}
			return nil
		}}
		if _, err := s.RecompressPack(context.Background(), packs[0]); err != nil {
			t.Fatal(err)
		}
		deltas := 0
		for _, id := range []objects.ID{id0, id1} {
			if l, _, err := db.Locator(id); err != nil {
				t.Fatal(err)
			} else if l.Delta() {
				deltas++
			}
		}
		if want := map[bool]int{false: 1, true: 0}[damaged]; deltas != want {
			t.Errorf("damaged=%v: %d of the versions stored as deltas, want %d", damaged, deltas, want)
		}
	}
}
