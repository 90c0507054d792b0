package maint

import (
	"context"
	"errors"
	"fmt"

	"github.com/ckpt/ckpt/objects"
)

// cancelCheckLocators is how many locators RecompressPack's scan reads
// between two checks of its context: a few hundred microseconds of work.
const cancelCheckLocators = 256

// DefaultSliceBytes is how many stored bytes of a deferred pack one
// RecompressPack call rewrites at most (Store.SliceBytes when that is 0):
// about a second of compression at the recompression level on one core, so
// a resident server whose requests cancel the slice in flight still makes
// progress between requests a few seconds apart, where a slice of a whole
// 128 MiB pack would be cancelled every time and never finish.
const DefaultSliceBytes = 16 << 20

// Recompressed reports one slice of the recompression of a deferred pack.
type Recompressed struct {
	Blobs       int   // locators moved out of the pack by this slice
	BytesBefore int64 // the stored bytes this slice rewrote
	BytesAfter  int64 // the records written in their place
	Finished    bool  // nothing was left in the pack, which was removed
}

// RecompressPack rewrites the next slice of deferred pack n compressed
// (small blobs into groups, see deferredHow; as deltas against the bases
// Store.Bases offers, where that pays): the records of n, in locator
// order, up to SliceBytes of them (at least one). It works in the
// crash-safe order of a collection: the new records are fsynced, one
// synced index batch moves the slice's locators, and only when no locator
// is left pointing into n are n and its marker removed (Finished). Every
// locator into n moves, live or not (what is dead is a collection's
// business), so it needs no reachability graph: one scan of the locators
// per slice (and, with Store.Bases, a read of each delta record that
// Store.DeltaBases does not hold). A committed slice stays done: the next
// call moves only what is still in n. A crash before a commit leaves
// unreferenced new packs (a collection removes them) and n still marked;
// after the last, n without a locator, which the next call removes. ctx is checked every
// cancelCheckLocators locators of the scan and between records; a
// cancelled call removes what it wrote in this slice and leaves n as the
// slice found it. (A resident server cancels a slice when a request
// arrives and the request waits for the slice to stop: that wait must not
// grow with the store, as a scan of every blob's locator does, nor with
// the pack.)
//
// The caller holds the store's write lock for the call.
func (s *Store) RecompressPack(ctx context.Context, n uint32) (*Recompressed, error) {
	if _, err := s.Blobs.FS().Stat(s.Blobs.PackPath(n)); err != nil {
		return nil, fmt.Errorf("recompress: %w", err)
	}
	budget := s.SliceBytes
	if budget <= 0 {
		budget = DefaultSliceBytes
	}
	out := &Recompressed{Finished: true}
	var moves []objects.Move
	taken := map[int64]bool{} // offsets of the records in the slice: a group's members share one
	// The bases of delta records: a blob that is one must stay whole (see
	// objects.Move.Bases). A delta that does not name its base leaves
	// every blob of the slice whole.
	bases, knownBases := map[objects.ID]bool{}, true
	scanned := 0
	err := s.DB.EachLocator(func(id objects.ID, loc objects.Locator) error {
		if scanned++; scanned%cancelCheckLocators == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if loc.Delta() && s.Bases != nil && knownBases {
			base, read := s.DeltaBases[loc]
			var err error
			if !read {
				base, err = s.Blobs.DeltaBase(id, loc)
			}
			switch {
			case errors.Is(err, objects.ErrCorrupt):
				knownBases = false // verify reports it
			case err != nil:
				return err
			default:
				bases[base] = true
				if s.DeltaBases != nil {
					s.DeltaBases[loc] = base
				}
			}
		}
		switch {
		case loc.Pack != n:
		case taken[loc.Offset]:
			moves = append(moves, objects.Move{ID: id, Loc: loc, How: deferredHow(loc)})
		case len(moves) > 0 && out.BytesBefore+int64(loc.Length) > budget:
			out.Finished = false // left for the next slice
		default:
			moves = append(moves, objects.Move{ID: id, Loc: loc, How: deferredHow(loc)})
			taken[loc.Offset] = true
			out.BytesBefore += int64(loc.Length)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := range moves {
		// Offered once the scan has named every delta's base.
		if m := &moves[i]; s.Bases != nil && knownBases && !bases[m.ID] && m.How != objects.MoveCopy {
			m.Bases = s.Bases(m.ID)
		}
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
	out.Blobs, out.BytesAfter = len(moved), res.BytesCopied
	if !out.Finished {
		return out, nil
	}
	s.step("remove")
	if err := s.Blobs.RemovePack(n); err != nil {
		return nil, err
	}
	return out, nil
}
