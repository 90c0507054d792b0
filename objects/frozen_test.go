package objects_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/internal/frozen"
	"github.com/ckpt/ckpt/objects"
)

// The packs of the store frozen under testdata (written by an earlier
// version of this package, or this one) read back, verified, every file
// content of the recipe, and every committed record scans and verifies.
func TestFrozenStorePacks(t *testing.T) {
	for _, v := range frozen.Versions {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) { checkFrozenPacks(t, frozen.Copy(t, v)) })
	}
}

func checkFrozenPacks(t *testing.T, store string) {
	db, err := index.Open(filepath.Join(store, "index"), index.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := objects.Open(store, db, objects.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	reads := s.ReadSession()
	files := 0
	for _, step := range frozen.Steps() {
		for path, e := range frozen.Expected(t, step) {
			if e.Kind != "file" {
				continue
			}
			files++
			for name, get := range map[string]func(objects.ID) ([]byte, error){"store": s.Get, "session": reads.Get} {
				got, err := get(objects.Sum([]byte(e.Content)))
				if err != nil || string(got) != e.Content {
					t.Errorf("%s: %s read %d bytes, %v; want the recipe's %d", path, name, len(got), err, len(e.Content))
				}
			}
		}
	}
	if files == 0 {
		t.Fatal("the recipe has no files")
	}
	packs, err := s.Packs()
	if err != nil || len(packs) == 0 {
		t.Fatalf("packs: %v, %v", packs, err)
	}
	scanned := map[objects.ID]bool{}
	for _, n := range packs {
		if err := s.ScanPack(n, func(id objects.ID, loc objects.Locator) error {
			scanned[id] = true
			if loc.Grouped() {
				return nil // checked whole below, through a member
			}
			_, err := s.ReadRecord(loc)
			return err
		}); err != nil {
			t.Fatalf("pack %d: %v", n, err)
		}
	}
	if err := db.EachLocator(func(id objects.ID, loc objects.Locator) error {
		if loc.Grouped() {
			return reads.CheckGroup(loc)
		}
		if !scanned[id] {
			t.Errorf("blob %s: its record is not among the scanned ones", id.Short())
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
