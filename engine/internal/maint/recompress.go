package maint

import (
	"context"
	"fmt"

	"github.com/ckpt/ckpt/objects"
)

// cancelCheckLocators is how many locators RecompressPack's scan reads
// between two checks of its context: a few hundred microseconds of work.
const cancelCheckLocators = 256

// Recompressed reports the recompression of one deferred pack.
type Recompressed struct {
	Blobs       int   // locators moved out of it
	BytesBefore int64 // the deferred pack's size on disk
	BytesAfter  int64 // the records written in its place
}

// RecompressPack rewrites deferred pack n compressed (small blobs into
// groups, see deferredHow) and removes it, in the crash-safe order of a
// collection: the new records are fsynced, one synced index batch moves
// every locator that pointed into n, and only then are n and its marker
// removed. Every locator into n moves, live or not (what is dead is a
// collection's business), so it needs no reachability graph: one scan of
// the locators. A crash before the commit leaves unreferenced new packs (a
// collection removes them) and n still marked; after it, n without a
// locator, which the next call removes. ctx is checked every
// cancelCheckLocators locators of the scan and between records; a
// cancelled call removes what it wrote and leaves n as it was. (A resident
// server cancels a slice when a request arrives and the request waits for
// the slice to stop: that wait must not grow with the store, as a scan of
// every blob's locator does.)
//
// The caller holds the store's write lock for the call.
func (s *Store) RecompressPack(ctx context.Context, n uint32) (*Recompressed, error) {
	fi, err := s.Blobs.FS().Stat(s.Blobs.PackPath(n))
	if err != nil {
		return nil, fmt.Errorf("recompress: %w", err)
	}
	out := &Recompressed{BytesBefore: fi.Size()}
	var moves []objects.Move
	scanned := 0
	err = s.DB.EachLocator(func(id objects.ID, loc objects.Locator) error {
		if scanned++; scanned%cancelCheckLocators == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if loc.Pack == n {
			moves = append(moves, objects.Move{ID: id, Loc: loc, How: deferredHow(loc)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res := &Swept{}
	moved, err := s.rewrite(ctx, moves, nil, res)
	if err != nil {
		return nil, err
	}
	if len(moved) > 0 {
		b := s.DB.NewBatch()
		defer b.Close()
		for id, loc := range moved {
			b.PutLocator(id, loc)
		}
		s.step("commit")
		if err := b.Commit(); err != nil {
			return nil, fmt.Errorf("recompress: commit index: %w", err)
		}
	}
	s.step("remove")
	if err := s.Blobs.RemovePack(n); err != nil {
		return nil, err
	}
	out.Blobs, out.BytesAfter = len(moved), res.BytesCopied
	return out, nil
}
