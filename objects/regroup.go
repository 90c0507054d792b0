package objects

import (
	"fmt"

	"github.com/ckpt/ckpt/objects/internal/pack"
)

// Regroup reads blob id at loc, verified, and adds its content to a new
// group record the rewriter is filling, so that garbage collection keeps
// only the live members of a mostly dead group (or gathers small plain
// records into groups) and recompresses them with the store's codec. The
// group is written once it is full, or at Sync, which returns the blob's
// new placement; until then the blob's locator is the old one. Only a
// blob of at most 1 MiB that is not a chunk list can be regrouped; damage
// is a *CorruptError and adds nothing.
func (r *rewriter) Regroup(id ID, loc Locator) error {
	if r.err != nil {
		return r.err
	}
	if !loc.Regroupable() {
		return fmt.Errorf("regroup %s: only blobs of at most %d bytes that are not chunk lists join groups", id.Short(), groupBlobMax)
	}
	// A group is read once for all its members regrouped one after another.
	content, err := r.reads.content(loc, id)
	if err != nil {
		return err
	}
	if r.s.addMember(&r.open, id, content).full() {
		return r.writeGroup()
	}
	return nil
}

// writeGroup writes the group Regroup is filling, if any, and records its
// members' placements for Sync.
func (r *rewriter) writeGroup() error {
	g := r.open
	if g == nil {
		return nil
	}
	r.open = nil
	h, payload, done, err := r.s.sealGroup(g, r.codec, r.stop)
	defer done()
	if err != nil {
		r.err = err
		return err
	}
	off, pack, err := r.append(h, payload)
	if err != nil {
		return err
	}
	loc := Locator{Pack: pack, Offset: off, Length: uint32(h.recordLen()), Flags: h.flags}
	for i, id := range g.ids {
		l := loc
		l.Size, l.Member = int64(g.sizes[i]), uint32(i)
		r.placed = append(r.placed, Placement{ID: id, Loc: l})
	}
	return nil
}

// Regroupable reports whether Rewrite takes the blob at l with
// MoveRegroup: a group member, or a blob of at most 1 MiB that is not a
// chunk list.
func (l Locator) Regroupable() bool {
	return l.Flags&pack.FlagChunked == 0 && l.Size <= groupBlobMax
}

// GroupShare returns the share of the group record at loc (a member's
// locator) that members of its members, holding bytes of content
// together, make up: their contents and table entries, and the group's
// member count, against its decoded length with every member, dead ones
// included. It reads only the record's header, so a collection can weigh
// a group's live members cheaply; the header check guards the length, and
// damage is a *CorruptError.
func (s *Store) GroupShare(loc Locator, members int, bytes int64) (float64, error) {
	size, err := s.groupSize(loc)
	if err != nil || size <= 0 {
		return 1, err
	}
	return float64(pack.GroupHeadLen+bytes+int64(members)*pack.GroupEntryLen) / float64(size), nil
}

// groupSize returns the decoded length of the group record at loc.
func (s *Store) groupSize(loc Locator) (int64, error) {
	if loc.Flags&pack.FlagGroup == 0 {
		return 0, fmt.Errorf("locator %d/%d is not a group member", loc.Pack, loc.Offset)
	}
	corrupt := func(reason string) error {
		return &CorruptError{Pack: s.PackPath(loc.Pack), Offset: loc.Offset, Reason: reason}
	}
	hl := loc
	hl.Length = pack.RecordHeaderLen
	raw, err := s.rawRecord(hl)
	if err != nil {
		return 0, err
	}
	h, err := parseRecordHeader(raw)
	switch {
	case err != nil:
		return 0, corrupt(err.Error())
	case h.recordLen() != int64(loc.Length) || h.flags != loc.Flags:
		return 0, corrupt("record does not match its locator")
	case h.size > maxGroupSize:
		return 0, corrupt(fmt.Sprintf("group size %d out of range", h.size))
	}
	return h.size, nil
}
