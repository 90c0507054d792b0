package objects

import (
	"errors"
	"fmt"

	"github.com/klauspost/compress/zstd"

	"github.com/ckpt/ckpt/objects/internal/pack"
)

// Delta records (objects/internal/pack, "Delta records"): a new version of
// a file whose previous version is stored is kept as a zstd frame of the
// new content with the previous content as its raw dictionary (zstd's
// patch-from), when that is clearly smaller than the content stored whole.
// A one-line edit of a source file then costs some 50 bytes of frame
// instead of the whole file compressed.
const (
	// deltaMin: below it a record's header eats what a delta saves over
	// a group member.
	deltaMin = 512
	// deltaMax bounds a delta's content and its base's: large files are
	// chunked, and a delta read decodes its whole chain.
	deltaMax = 1 << 20
	// deltaBaseMin: a shorter base gives the frame nothing to refer to.
	deltaBaseMin = 64
	// deltaClearly: a delta record this many times smaller than the
	// content is kept without compressing the content whole to compare.
	deltaClearly = 16
)

// Delta reports whether l is a delta record: its content is decoded
// against another blob's, which the store keeps as long as the delta
// (Store.DeltaBase).
func (l Locator) Delta() bool { return l.Flags&pack.FlagDelta != 0 }

// writeDelta stores content (blob id) as a delta record against blob prev,
// the previous version of the same file, when prev is a committed blob of
// a delta's size (not chunked) whose chain leaves room for one more, and
// the delta is clearly smaller than the content stored whole. It reports
// whether it wrote the record. A record prepared for the same content and
// base record (PrepareVersion) is written as prepared. A base that does not
// verify is left to verify to report: the content is then stored whole.
func (b *Batch) writeDelta(id ID, content []byte, prev ID) (bool, error) {
	if len(content) < deltaMin || len(content) > deltaMax || b.deferred || prev == id {
		return false, nil
	}
	loc, ok, err := b.s.deltaBase(prev)
	if !ok || err != nil {
		return false, err
	}
	payload, found := b.s.deltas.take(deltaKey{id, prev, loc})
	if !found {
		scratch := getScratch(&b.s.packBufs)
		defer b.s.packBufs.Put(scratch)
		var pays bool
		if payload, pays, err = b.s.encodeDelta((*scratch)[:0], id, content, prev, loc); err != nil {
			return false, err
		}
		*scratch = payload[:0]
		if !pays {
			payload = nil
		}
	}
	if payload == nil {
		return false, nil
	}
	h := recordHeader{flags: pack.FlagDelta, id: id, size: int64(len(content)), payloadLen: uint32(len(payload))}
	return true, b.appendPlaced(h, payload)
}

// encodeDelta appends to dst the payload of a delta record of content
// against blob prev, stored at loc, and reports whether that record pays
// (deltaPays); it keeps both versions among the store's recent contents
// (recent.go). It does not pay when prev's chain leaves no room for one more,
// or when prev does not verify (the content is then stored whole and
// verify reports the base).
func (s *Store) encodeDelta(dst []byte, id ID, content []byte, prev ID, loc Locator) ([]byte, bool, error) {
	bh, base, err := s.readRecord(loc, prev)
	switch {
	case errors.Is(err, ErrCorrupt):
		return dst, false, nil
	case err != nil:
		return dst, false, err
	}
	s.keepRecent(prev, base)
	s.keepRecent(id, content)
	payload, ok, err := deltaFrame(s.codec, dst, content, prev, base, bh.depth)
	if !ok || err != nil {
		return dst, false, err
	}
	pays, err := s.deltaPays(s.codec, len(payload), content)
	return payload, pays, err
}

// deltaFrame appends to dst the payload of a delta record of content
// against blob prev, whose verified content is base and whose depth is
// depth (0 for a blob stored whole), encoded by c. It reports false, and
// appends nothing, when prev's chain leaves no room for one more.
func deltaFrame(c *codec, dst, content []byte, prev ID, base []byte, depth int) ([]byte, bool, error) {
	if depth >= pack.MaxDeltaDepth {
		return dst, false, nil
	}
	payload := append(append(dst, prev[:]...), byte(depth+1))
	payload, err := c.deltaEncode(payload, content, base)
	if err != nil {
		return dst, false, err
	}
	return payload, true, nil
}

// deltaBase returns the locator of blob prev when a new version may be
// stored as a delta against it: a committed blob, not chunked, of a
// delta's size.
func (s *Store) deltaBase(prev ID) (Locator, bool, error) {
	loc, found, err := s.idx.Locator(prev)
	if err != nil {
		return Locator{}, false, fmt.Errorf("look up %s: %w", prev.Short(), err)
	}
	return loc, found && !loc.Chunked() && loc.Size >= deltaBaseMin && loc.Size <= deltaMax, nil
}

// WarmBase reads blob id ahead of the save that may store the next version
// of its file as a delta against it (see Batch.PutVersion), when id is
// such a base stored as a member of a group or as a delta: a read leaves
// the group's frames (for a delta, those of the group member its chain
// ends in, if it ends in one) decoded in the store's group cache, and that
// save then finds them there instead of decoding them again. It reports
// whether it read id; an unknown id, or one that is no such base, it
// leaves alone. It changes nothing in the store. The error is the
// read's (a *CorruptError for damage), which the save would meet too.
func (s *Store) WarmBase(id ID) (bool, error) {
	loc, ok, err := s.deltaBase(id)
	if !ok || err != nil || loc.Flags&(pack.FlagGroup|pack.FlagDelta) == 0 {
		return false, err
	}
	_, _, err = s.readRecord(loc, id)
	return err == nil, err
}

// deltaPays reports whether a delta record with a payload of deltaLen
// bytes is clearly smaller than content stored whole: deltaClearly times
// smaller than the content, or else three quarters of the content
// compressed alone by c at most.
func (s *Store) deltaPays(c *codec, deltaLen int, content []byte) (bool, error) {
	cost := deltaLen + pack.RecordHeaderLen
	switch {
	case cost*deltaClearly <= len(content):
		return true, nil
	case cost >= len(content):
		return false, nil
	}
	scratch := getScratch(&s.packBufs)
	defer s.packBufs.Put(scratch)
	whole, flags, err := c.compress(*scratch, content, false)
	if flags&pack.FlagCompressed != 0 {
		*scratch = whole[:0]
	}
	return cost*4 <= len(whole)*3, err
}

// parseDelta splits a delta record's payload into its base's id, its depth
// and its zstd frame. The error is a reason for a CorruptError.
func parseDelta(payload []byte) (base ID, depth int, frame []byte, err error) {
	if len(payload) <= pack.DeltaHeadLen {
		return base, 0, nil, fmt.Errorf("delta payload of %d bytes", len(payload))
	}
	copy(base[:], payload[:IDSize])
	depth = int(payload[IDSize])
	if depth < 1 || depth > pack.MaxDeltaDepth {
		return base, 0, nil, fmt.Errorf("delta depth %d out of range 1..%d", depth, pack.MaxDeltaDepth)
	}
	return base, depth, payload[pack.DeltaHeadLen:], nil
}

// undelta decodes the payload of a delta record of size bytes: it reads
// the base (verified, its own chain at most depth-1 deep, so that a read
// loads at most limit+1 records and damaged depths cannot loop) and
// decodes the frame against it. It returns the content, unverified, and
// the delta's depth. A missing or damaged base is a *CorruptError (the
// base's own when the base does not verify).
func (s *Store) undelta(payload []byte, size int64, limit int, session *ReadSession, corrupt func(string) error) ([]byte, int, error) {
	base, depth, frame, err := parseDelta(payload)
	switch {
	case err != nil:
		return nil, 0, corrupt(err.Error())
	case depth > limit:
		return nil, 0, corrupt(fmt.Sprintf("delta of depth %d where at most %d may be", depth, limit))
	}
	loc, err := s.Stat(base)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, 0, corrupt("delta base " + base.Short() + " missing")
	case err != nil:
		return nil, 0, err
	case loc.Chunked() || loc.Size > deltaMax:
		return nil, 0, corrupt("delta base " + base.Short() + " is not a blob of a delta's size")
	}
	_, content, err := s.readVersion(loc, base, depth-1, session)
	if err != nil {
		return nil, 0, err
	}
	out, err := s.codec.deltaDecode(frame, content, size)
	if err != nil {
		return nil, 0, corrupt(err.Error())
	}
	return out, depth, nil
}

// DeltaBase returns the base of delta blob id at loc (Locator.Delta): the
// blob its content decodes against, which must stay stored as long as the
// delta does (a collection keeps it alive as it keeps a chunked file's
// chunks). It reads the delta's record, not the base. Damage is a
// *CorruptError.
func (s *Store) DeltaBase(id ID, loc Locator) (ID, error) {
	if !loc.Delta() {
		return ID{}, fmt.Errorf("blob %s is not a delta", id.Short())
	}
	corrupt := s.recordCorrupt(loc, id)
	h, payload, err := s.loadRecord(loc, corrupt)
	if err != nil {
		return ID{}, err
	}
	if h.id != id || h.size != loc.Size {
		return ID{}, corrupt("record does not match its locator")
	}
	base, _, _, err := parseDelta(payload)
	if err != nil {
		return ID{}, corrupt(err.Error())
	}
	return base, nil
}

// WholeRecord returns delta blob id at loc (Locator.Delta) as a record
// that stands alone: its content, read and verified through its chain,
// stored compressed at Options.Level (raw when that does not pay), header
// included, and the locator of that record (Pack and Offset zero). It is
// what a copy of the blob kept outside the store (a remote's) holds: a
// delta's base need not be there. Damage is a *CorruptError.
func (s *Store) WholeRecord(id ID, loc Locator) ([]byte, Locator, error) {
	if !loc.Delta() {
		return nil, Locator{}, fmt.Errorf("blob %s is not a delta", id.Short())
	}
	_, content, err := s.readRecord(loc, id)
	if err != nil {
		return nil, Locator{}, err
	}
	payload, flags, err := s.codec.compress(nil, content, true)
	if err != nil {
		return nil, Locator{}, err
	}
	h := recordHeader{flags: flags, id: id, size: loc.Size, payloadLen: uint32(len(payload))}
	rec := append(appendRecordHeader(make([]byte, 0, h.recordLen()), h), payload...)
	return rec, Locator{Length: uint32(len(rec)), Flags: flags, Size: loc.Size}, nil
}

// deltaLargeBase is the largest base a delta is encoded against at the
// codec's own level (up to deltaLevelMax). At SpeedFastest the encoder's
// small match table loses most of a larger base (a one-line edit of a
// 1 MiB file took 15 KiB, against under 1 KiB at SpeedDefault); up to
// 256 KiB it finds what SpeedDefault finds within some 50 bytes, while
// SpeedDefault's reset, which clears a table of a megabyte whatever the
// base's size, made a delta of a few-kilobyte file cost 0.6 ms instead of
// 0.08.
const deltaLargeBase = 256 << 10

// deltaLevelMax is the highest level a delta is encoded at, whatever the
// codec's: a delta's matches are mostly long ones into its base, which
// SpeedDefault finds, while the higher levels' encoders rebuild match
// tables of tens of megabytes for each new base. On the pinned modules'
// recompression (bench/README.md), with deltas at SpeedBestCompression it
// took 204 s instead of 52 without deltas, 69% of its CPU time in those
// resets, and peaked at 1.5 GiB of RSS; at SpeedDefault its packs were
// 0.5% larger.
const deltaLevelMax = zstd.SpeedDefault

// deltaWindow is the window of a delta's frame: a base and a content of
// at most deltaMax each fit in it, so every byte of the base stays within
// reach. The encoder keeps a history buffer of its window (and a block),
// so the zstd default of 8 MiB cost each delta encoder that much memory
// the first time it ran.
const deltaWindow = 2 * deltaMax

// deltaEncode appends to dst a zstd frame of src that decodes with base as
// its raw dictionary.
func (c *codec) deltaEncode(dst, src, base []byte) ([]byte, error) {
	pool, level := c.deltaEnc[0], c.level
	if len(base) > deltaLargeBase {
		pool, level = c.deltaEnc[1], max(c.level, zstd.SpeedDefault)
	}
	level = min(level, deltaLevelMax)
	e := <-pool
	defer func() { pool <- e }()
	dict := zstd.WithEncoderDictRaw(0, base)
	if e == nil {
		opts := append(c.encoderOptions(), dict, zstd.WithEncoderLevel(level), zstd.WithWindowSize(deltaWindow))
		var err error
		if e, err = zstd.NewWriter(nil, opts...); err != nil {
			return nil, fmt.Errorf("zstd encoder: %w", err)
		}
	} else if err := e.ResetWithOptions(nil, dict); err != nil {
		return nil, fmt.Errorf("zstd encoder: %w", err)
	}
	return e.EncodeAll(src, dst), nil
}

// deltaDecode decodes frame, a delta's, against base into a new slice,
// which must be exactly size bytes; it never allocates more. The error
// is a reason for a CorruptError.
func (c *codec) deltaDecode(frame, base []byte, size int64) ([]byte, error) {
	d, err := c.decoder()
	if err != nil {
		return nil, err
	}
	if err := d.ResetWithOptions(nil, zstd.WithDecoderDictRaw(0, base)); err != nil {
		d.Close()
		return nil, fmt.Errorf("zstd decoder: %w", err)
	}
	out, err := d.DecodeAll(frame, make([]byte, 0, size))
	if d.ResetWithOptions(nil, zstd.WithDecoderDictDelete()) == nil {
		c.putDecoder(d)
	} else {
		d.Close()
	}
	switch {
	case err != nil:
		return nil, fmt.Errorf("undecodable delta: %w", err)
	case int64(len(out)) != size:
		return nil, fmt.Errorf("delta decodes to %d bytes, want %d", len(out), size)
	}
	return out, nil
}

// deltaTries bounds the bases a rewrite encodes one blob against
// (Move.Bases): each is a zstd frame (deltaLevelMax).
const deltaTries = 2

// Delta reads blob id at loc, verified, and appends it as a delta record
// against the one of bases (the first deltaTries that qualify) that gives
// the smallest, when that pays (deltaPays), returning its locator and true.
// A base qualifies when it is of a delta's size, stored whole (so that a
// read of the delta loads two records, whatever the order the rewrite
// took), and no rewrite will turn it into a delta: committed outside every
// deferred pack, or moved whole earlier in this rewrite (its new locator is
// committed with the delta's). When none does Delta writes nothing and reports
// false; the caller moves the blob another way. Damage to the blob, or to
// a base moved earlier, is a *CorruptError and writes nothing; a committed
// base that does not verify is passed over (verify reports it).
func (r *rewriter) Delta(id ID, loc Locator, bases []ID) (Locator, bool, error) {
	if r.err != nil {
		return Locator{}, false, r.err
	}
	if loc.Chunked() || loc.Size < deltaMin || loc.Size > deltaMax {
		return Locator{}, false, nil
	}
	if r.deferred == nil {
		packs, err := r.s.DeferredPacks()
		if err != nil {
			return Locator{}, false, err
		}
		r.deferred = make(map[uint32]bool, len(packs))
		for _, n := range packs {
			r.deferred[n] = true
		}
	}
	content, err := r.reads.content(loc, id)
	if err != nil {
		return Locator{}, false, err
	}
	var best []byte
	tried := 0
	for _, b := range bases {
		if tried == deltaTries {
			break
		}
		if tried > 0 && r.stop != nil {
			if err := r.stop(); err != nil {
				return Locator{}, false, err
			}
		}
		base, ok, err := r.deltaBase(id, b)
		if err != nil {
			return Locator{}, false, err
		}
		if !ok {
			continue
		}
		tried++
		payload, ok, err := deltaFrame(r.codec, nil, content, b, base, 0)
		if err != nil {
			return Locator{}, false, err
		}
		if ok && (best == nil || len(payload) < len(best)) {
			best = payload
		}
	}
	if best == nil {
		return Locator{}, false, nil
	}
	if pays, err := r.s.deltaPays(r.codec, len(best), content); !pays || err != nil {
		return Locator{}, false, err
	}
	h := recordHeader{flags: pack.FlagDelta, id: id, size: loc.Size, payloadLen: uint32(len(best))}
	off, n, err := r.append(h, best)
	if err != nil {
		return Locator{}, false, err
	}
	r.movedAs(id, false)
	return Locator{Pack: n, Offset: off, Length: uint32(h.recordLen()), Flags: pack.FlagDelta, Size: loc.Size}, true, nil
}

// deltaBase returns the verified content of blob b when it qualifies as
// a base of blob id in this rewrite (see Delta).
func (r *rewriter) deltaBase(id, b ID) ([]byte, bool, error) {
	bl, ok, err := r.s.deltaBase(b)
	if !ok || err != nil || b == id || bl.Delta() {
		return nil, false, err
	}
	if whole, early := r.moved[b]; early {
		if !whole {
			return nil, false, nil
		}
		// Still at its old place until the commit: read it there (it
		// verified when it moved; damage since fails the rewrite).
		content, err := r.reads.content(bl, b)
		return content, err == nil, err
	}
	if r.deferred[bl.Pack] {
		return nil, false, nil
	}
	_, content, err := r.s.readRecord(bl, b)
	if errors.Is(err, ErrCorrupt) {
		return nil, false, nil
	}
	return content, err == nil, err
}

// movedAs records that blob id moved in this rewrite, stored whole or as
// a delta, for the deltas after it (Delta).
func (r *rewriter) movedAs(id ID, whole bool) {
	if r.moved == nil {
		r.moved = make(map[ID]bool)
	}
	r.moved[id] = whole
}
