package objects

import (
	"cmp"
	"context"
	"errors"
	"slices"
)

// Move is one live blob of a pack a collection reclaims, and how Rewrite
// moves it.
type Move struct {
	ID  ID
	Loc Locator
	How MoveMode
	// Bases, for a blob moved with MoveRegroup or MoveRecompress, are
	// blobs whose content is likely close to its own (the same file in
	// another version of a directory), nearest first: Rewrite stores the
	// blob as a delta record against one of them instead (Delta), encoded
	// at most at SpeedDefault, when that pays as it does for a save's new
	// version of a file (see Batch.PutVersion). Only a base of a delta's
	// size stored whole that no rewrite will turn into a delta qualifies:
	// committed outside every deferred pack, or moved whole earlier in the
	// same rewrite. The caller must not offer bases to a blob that is
	// itself the base of a delta record: that delta's depth would no
	// longer bound its chain, and it would read as damaged. Nil: none.
	Bases []ID
}

// MoveMode is how Rewrite moves one blob.
type MoveMode int

const (
	// MoveCopy copies the blob's record unchanged, verified. A group
	// record is copied whole, once, for every member moved this way; its
	// members not moved stay in the copy as dead bytes.
	MoveCopy MoveMode = iota
	// MoveRegroup writes the blob's content, verified, into a new group
	// record with the other blobs regrouped alongside, compressed at
	// Options.RecompressLevel: a collection keeps only the live members of
	// a mostly dead group. Only a Regroupable blob can move this way.
	MoveRegroup
	// MoveRecompress writes a plain blob (not a chunk list, not a group
	// member), verified, into a record of its own compressed at
	// Options.RecompressLevel (raw when that does not pay): the large
	// blobs of a deferred pack.
	MoveRecompress
)

// ReleaseRecompression drops the encoders of Options.RecompressLevel,
// made again when a rewrite next needs one. An encoder of zstd's best
// level holds some 34 MiB of match tables whatever it compresses: a
// resident process calls this when a run of rewrites is over (a
// collection, the recompression of every deferred pack), not between the
// slices of one, which would make and clear those tables for each.
func (s *Store) ReleaseRecompression() { s.recodec.release() }

// Rewrite is the first step of the collection that reclaims packs holding
// mostly dead records: it moves the blobs of moves into fresh packs, fsyncs
// them, and returns each blob's new placement, not yet committed. The
// protocol that keeps every committed blob readable through a crash at any
// point:
//
//  1. Rewrite every live blob of the packs to reclaim: the copies are
//     durable, but nothing references them yet;
//  2. the caller commits the new locators to its index in one batch;
//  3. only then RemovePack the old packs.
//
// A crash before step 2 leaves unreferenced copies (the old locators stay
// valid); a crash after it leaves unreferenced old packs. Either is garbage
// the next collection removes. On failure (damage is a *CorruptError, or
// ctx ends) Rewrite removes the packs it created and returns the error.
//
// Rewrite only ever appends to packs it creates, never to an existing one,
// so the packs being reclaimed are never written. The caller must hold the
// store's lock and keep Batches from running meanwhile (the engine
// serialises collections with saves). step, when not nil, is called before
// each blob moves, with "copy" (MoveCopy, MoveRecompress) or "regroup" and
// the number of blobs moved so far (a blob with Move.Bases is first
// offered as a delta, with "delta", then moved the other way unless that
// paid), and with "sync" before the fsync; ctx
// is checked before each blob and after that last step.
func (s *Store) Rewrite(ctx context.Context, moves []Move, step func(op string, done int)) ([]Placement, error) {
	return s.rewrite(ctx, moves, step, s.recodec)
}

// RewriteAtSaveLevel is Rewrite compressing what it regroups or
// recompresses at a save's level (Options.Level) instead of
// Options.RecompressLevel: several times faster and a few percent larger,
// for a rewrite that something waits for (a push that must compress a
// first save's deferred packs before they leave).
func (s *Store) RewriteAtSaveLevel(ctx context.Context, moves []Move, step func(op string, done int)) ([]Placement, error) {
	return s.rewrite(ctx, moves, step, s.codec)
}

// rewrite is Rewrite compressing with c.
func (s *Store) rewrite(ctx context.Context, moves []Move, step func(op string, done int), c *codec) ([]Placement, error) {
	if len(moves) == 0 {
		return nil, nil
	}
	moves = slices.Clone(moves)
	slices.SortFunc(moves, func(a, b Move) int { // read each pack in order, a group's members together
		return cmp.Or(cmp.Compare(a.Loc.Pack, b.Loc.Pack), cmp.Compare(a.Loc.Offset, b.Loc.Offset), cmp.Compare(a.Loc.Member, b.Loc.Member))
	})
	if step == nil {
		step = func(string, int) {}
	}
	rw := s.newRewriter(c)
	rw.stop = ctx.Err
	defer rw.Close()
	out := make([]Placement, 0, len(moves))
	for i, m := range moves {
		if err := ctx.Err(); err != nil {
			return nil, rw.abandon(err)
		}
		if len(m.Bases) > 0 && m.How != MoveCopy {
			step("delta", i)
			loc, ok, err := rw.Delta(m.ID, m.Loc, m.Bases)
			if err != nil {
				return nil, rw.abandon(err)
			}
			if ok {
				out = append(out, Placement{ID: m.ID, Loc: loc})
				continue
			}
		}
		if m.How == MoveRegroup {
			step("regroup", i)
			if err := rw.Regroup(m.ID, m.Loc); err != nil {
				return nil, rw.abandon(err)
			}
			rw.movedAs(m.ID, true)
			continue
		}
		step("copy", i)
		move := rw.Copy
		if m.How == MoveRecompress {
			move = rw.Recompress
		}
		loc, err := move(m.ID, m.Loc)
		if err != nil {
			return nil, rw.abandon(err)
		}
		if m.How == MoveRecompress {
			rw.movedAs(m.ID, true)
		}
		out = append(out, Placement{ID: m.ID, Loc: loc})
	}
	step("sync", len(moves))
	// A cancellation that came with the last record is honoured before
	// the sync, which is the costly part of a small rewrite.
	if err := ctx.Err(); err != nil {
		return nil, rw.abandon(err)
	}
	regrouped, err := rw.Sync()
	if err != nil {
		return nil, rw.abandon(err)
	}
	return append(out, regrouped...), nil
}

// abandon removes the packs a failed rewrite created (nothing references
// them) and returns err.
func (r *rewriter) abandon(err error) error {
	packs := r.Packs() // before Close, which lets go of the current pack
	r.Close()
	for _, n := range packs {
		err = errors.Join(err, r.s.RemovePack(n))
	}
	return err
}
