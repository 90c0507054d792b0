package objects

import (
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/ckpt/ckpt/internal/storefs"
	"github.com/ckpt/ckpt/objects/internal/pack"
)

// PayloadLen is the length of the stored payload of the record at l (a
// zstd frame, a raw content, a chunk list or a group): the record's length
// without its header.
func (l Locator) PayloadLen() int64 { return int64(l.Length) - pack.RecordHeaderLen }

// rewriter is the session behind Store.Rewrite: it copies, regroups and
// recompresses live records into fresh packs. A rewriter only ever appends to packs it created, never to an existing
// one, so the packs being reclaimed are never written. It is not safe for
// concurrent use; the caller must hold the store's lock and keep Batches
// from running meanwhile (the engine serialises GC with saves).
type rewriter struct {
	s        *Store
	w        *packWriter // current pack, nil before the first Copy or after a rollover
	created  bool        // a pack was created since the last Sync
	finished []uint32    // packs filled to the cap and already synced
	err      error       // sticky failure
	// groups maps a group record already copied (its old pack and offset)
	// to its copy's locator: each group is copied once, for all members.
	groups map[groupKey]Locator
	open   *group      // blobs Regroup collected, not yet written
	placed []Placement // regrouped blobs written since the last Sync
	// reads is what Regroup reads through: a collection regroups a group's
	// members one after another, and the packs it reads are never written
	// while it runs, so each group is read and decoded once.
	reads *ReadSession
	// codec compresses what Regroup, Recompress and Delta write.
	codec *codec
	// deferred holds the deferred packs when Delta first runs: a base in
	// one will be rewritten, and cannot be a delta's unless it moved
	// earlier in this rewrite; moved holds those, true for the ones
	// stored whole.
	deferred map[uint32]bool
	moved    map[ID]bool
	// stop, when set, is the rewrite's context's Err: the encodings that
	// take longest (a group's frames, a delta's bases) ask it as they go,
	// so that a cancelled rewrite stops within a frame, not a record.
	stop func() error
}

// groupKey names a group record by where it lives.
type groupKey struct {
	pack   uint32
	offset int64
}

// newRewriter starts a rewriting session. Close it when done.
func (s *Store) newRewriter(c *codec) *rewriter {
	return &rewriter{s: s, reads: s.SweepSession(), codec: c}
}

// Copy verifies the record of blob id at loc (content hashed against id,
// chunk lists checked) and appends it unchanged to the rewriter's current
// pack, returning the copy's locator. A group record is copied whole, once:
// the other members copied later share the copy, and members that are not
// copied stay in it as dead bytes. Damage is a *CorruptError and copies
// nothing. A full pack (Options.PackSize) is synced and a new one started.
func (r *rewriter) Copy(id ID, loc Locator) (Locator, error) {
	if r.err != nil {
		return Locator{}, r.err
	}
	if _, _, err := r.s.readRecord(loc, id); err != nil {
		return Locator{}, err
	}
	key := groupKey{loc.Pack, loc.Offset}
	if copied, ok := r.groups[key]; ok && loc.Flags&pack.FlagGroup != 0 {
		copied.Size, copied.Member = loc.Size, loc.Member
		return copied, nil
	}
	raw, err := r.s.rawRecord(loc)
	if err != nil {
		return Locator{}, err
	}
	h, err := parseRecordHeader(raw)
	if err != nil || (h.id != id && loc.Flags&pack.FlagGroup == 0) {
		return Locator{}, &CorruptError{Pack: r.s.PackPath(loc.Pack), Offset: loc.Offset, ID: id, Reason: "record changed while it was copied"}
	}
	if loc.Flags&pack.FlagGroup != 0 {
		// Copied whole, a group is checked whole: a read of one member
		// checks only that member.
		if _, err := r.s.decodeGroup(h, raw[pack.RecordHeaderLen:], r.s.recordCorrupt(loc, id)); err != nil {
			return Locator{}, err
		}
	}
	off, n, err := r.append(h, raw[pack.RecordHeaderLen:])
	if err != nil {
		return Locator{}, err
	}
	out := Locator{Pack: n, Offset: off, Length: loc.Length, Flags: loc.Flags, Size: loc.Size, Member: loc.Member}
	if loc.Flags&pack.FlagGroup != 0 {
		if r.groups == nil {
			r.groups = make(map[groupKey]Locator)
		}
		r.groups[key] = out
	}
	return out, nil
}

// append writes one record to the rewriter's current pack, creating one
// first when needed, and returns where it went. A pack that reaches
// Options.PackSize is synced and the next append starts a new one.
func (r *rewriter) append(h recordHeader, payload []byte) (off int64, n uint32, err error) {
	if r.w == nil {
		if r.w, err = r.s.newFreshPackWriter(); err != nil {
			r.err = err
			return 0, 0, err
		}
		r.created = true
	}
	n = r.w.n
	if off, err = r.w.append(h, payload); err != nil {
		r.err = err
		return 0, 0, err
	}
	if r.w.size >= r.s.opts.PackSize {
		err = r.w.sync()
		r.finished = append(r.finished, r.w.n)
		r.s.releaseWriter(r.w)
		r.w = nil
		if err != nil {
			r.err = err
			return 0, 0, err
		}
	}
	return off, n, nil
}

// Packs returns the numbers of the packs this rewriter created so far.
func (r *rewriter) Packs() []uint32 {
	out := append([]uint32(nil), r.finished...)
	if r.w != nil {
		out = append(out, r.w.n)
	}
	return out
}

// Sync writes the group Regroup is filling, flushes and fsyncs the
// current pack and, when a pack was created, the packs directory, and
// returns the placements of the blobs regrouped since the last Sync. Once
// it returns nil every copied or regrouped record is durable and its
// locator may be committed.
func (r *rewriter) Sync() ([]Placement, error) {
	if r.err != nil {
		return nil, r.err
	}
	if err := r.writeGroup(); err != nil {
		return nil, err
	}
	if r.w != nil {
		if err := r.w.sync(); err != nil {
			r.err = err
			return nil, err
		}
	}
	if r.created {
		if err := r.s.syncDir(); err != nil {
			r.err = err
			return nil, err
		}
		r.created = false
	}
	placed := r.placed
	r.placed = nil
	return placed, nil
}

// Close releases the current pack, cutting off the records not yet
// synced. Close is idempotent.
func (r *rewriter) Close() error {
	if r.w != nil {
		r.s.releaseWriter(r.w)
		r.w = nil
	}
	r.open = nil // never written: nothing references its blobs' new places
	if r.err == nil {
		r.err = errors.New("rewriter closed")
	}
	return nil
}

// rawRecord returns the stored bytes of the record at loc, header
// included, without decoding them.
func (s *Store) rawRecord(loc Locator) ([]byte, error) {
	ph, err := s.openPack(loc.Pack, loc.Offset)
	if err != nil {
		return nil, err
	}
	defer s.releasePack(ph)
	buf := make([]byte, loc.Length)
	if n, err := ph.f.ReadAt(buf, loc.Offset); n < len(buf) {
		if err == io.EOF {
			return nil, &CorruptError{Pack: s.PackPath(loc.Pack), Offset: loc.Offset, Reason: "record extends past end of pack"}
		}
		return nil, fmt.Errorf("read pack: %w", err)
	}
	return buf, nil
}

// newFreshPackWriter creates a new pack and returns a writer on it; unlike
// newPackWriter it never resumes an existing pack.
func (s *Store) newFreshPackWriter() (*packWriter, error) {
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		return nil, errors.New("store closed")
	}
	return s.createNextPackLocked()
}

// errPackHeld is returned when GC touches a pack a writer holds.
var errPackHeld = errors.New("pack is being written")

// RemovePack deletes pack n, and its deferred mark, and fsyncs the packs
// directory. The caller guarantees that its index no longer references the
// pack. Removing a pack that does not exist succeeds; removing one a
// writer holds fails.
func (s *Store) RemovePack(n uint32) error {
	s.mu.Lock()
	if st := s.mu.packs[n]; st != nil && st.held {
		s.mu.Unlock()
		return fmt.Errorf("%w: %s", errPackHeld, s.PackPath(n))
	}
	delete(s.mu.packs, n)
	if h := s.mu.open[n]; h != nil {
		delete(s.mu.open, n)
		h.evicted = true
		if h.refs == 0 {
			h.f.Close()
		}
	}
	s.mu.Unlock()
	if err := s.removeDeferredMark(n); err != nil {
		return err
	}
	if err := s.opts.FS.Remove(s.PackPath(n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove pack: %w", err)
	}
	return s.syncDir()
}

// TruncatePack cuts pack n to end bytes and fsyncs it, reclaiming a tail
// of records the index no longer references (or a torn tail a crash left).
// The caller guarantees that no committed locator reaches past end and
// that end is a record boundary; the next writer appends there.
func (s *Store) TruncatePack(n uint32, end int64) error {
	if end < int64(pack.HeaderLen) {
		return fmt.Errorf("truncate pack %s to %d bytes: inside the pack header", s.PackPath(n), end)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.mu.packs[n]
	if st != nil && st.held {
		return fmt.Errorf("%w: %s", errPackHeld, s.PackPath(n))
	}
	f, err := s.opts.FS.OpenReadWrite(s.PackPath(n), vfs.WriteCategoryUnspecified)
	if err != nil {
		return fmt.Errorf("truncate pack: %w", err)
	}
	defer f.Close()
	if err := storefs.Truncate(f, s.PackPath(n), end); err != nil {
		return fmt.Errorf("truncate pack: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync pack %s: %w", s.PackPath(n), err)
	}
	if st != nil {
		st.size, st.clean = end, true
	}
	return nil
}
