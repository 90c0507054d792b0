package objects

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"

	"github.com/ckpt/ckpt/objects/internal/pack"
)

// groupFrameLen is how many decoded bytes of a group each zstd frame of
// its stored payload holds (the last frame up to half as much again): a
// member read decodes the frame that holds the member, up to the member,
// and the head of the first for the table, instead of the group up to the
// member. On the generated corpus (bench/corpus, 10k files) frames of
// 256 KiB store 2.9% more than one frame per 1 MiB group at the fastest
// level and 4.5% more at the recompression level, where 128 KiB frames
// store 5.2% and 8.4% more.
const groupFrameLen = 256 << 10

// rawFrameLen is how much of a group payload stored raw (in a deferred
// pack) a read fetches at a time: a member of a few kilobytes costs one
// or two reads of this size, not the whole record.
const rawFrameLen = 16 << 10

// groupFrame is one zstd frame of a group's stored payload, or, for a
// payload stored raw, one rawFrameLen slice of it that needs no
// decoding. Its stored bytes are read from the record when a read first
// needs the frame (see payloadSource).
type groupFrame struct {
	off   int64 // offset of the frame's stored bytes in the stored payload
	n     int64 // stored length
	raw   bool  // stored as it decodes: its stored bytes are its content
	start int64 // offset of the frame's first decoded byte in the payload
	size  int64 // decoded length
	// mu is held by the one read loading or decoding the frame (see
	// frameReads).
	mu  sync.Mutex
	src []byte // the frame as stored, once read; set under mu
	// stored is len(src), read without mu (groupReader.held).
	stored atomic.Int64
	// out is what was decoded, the frame's first len(*out) bytes (nil:
	// nothing yet). It is set under mu and read without it; it only
	// grows, and the bytes it held are never changed.
	out atomic.Pointer[[]byte]
}

// decoded returns what was decoded of the frame so far.
func (f *groupFrame) decoded() []byte {
	if p := f.out.Load(); p != nil {
		return *p
	}
	return nil
}

// groupReader reads parts of one group record's decoded payload, reading
// from the record and decoding only the frames that hold them, and each
// of those at most up to what was asked (see frameReads). It keeps what
// it read and decoded, for the members read next. Safe for concurrent
// use: readers of different frames decode them at the same time, a reader
// of a frame waits only for the read decoding that frame, and a reader of
// what is already decoded waits for none. The slices it returns are never
// changed.
type groupReader struct {
	h      recordHeader
	frames []*groupFrame
	// decoding, when set, is called by a read about to decode frame i,
	// holding that frame's lock (a test's window into the decoding).
	decoding func(i int)
}

// newGroupReader indexes the frames of the group record with header h
// whose stored payload src reads: for a compressed payload it reads the
// frame and block headers only. The error is a reason for a CorruptError
// unless it is a readFailure.
func newGroupReader(h recordHeader, src payloadSource) (*groupReader, error) {
	g := &groupReader{h: h}
	switch {
	case h.size > maxGroupSize:
		return nil, fmt.Errorf("group size %d out of range", h.size)
	case src.len() != int64(h.payloadLen):
		return nil, fmt.Errorf("group payload of %d bytes read as %d", h.payloadLen, src.len())
	case h.flags&pack.FlagCompressed == 0:
		if src.len() != h.size {
			return nil, fmt.Errorf("group record does not match its size")
		}
		for start := int64(0); start < h.size; start += rawFrameLen {
			n := min(rawFrameLen, h.size-start)
			g.frames = append(g.frames, &groupFrame{off: start, n: n, raw: true, start: start, size: n})
		}
		return g, nil
	}
	frames, err := splitFrames(src, h.size)
	g.frames = frames
	return g, err
}

// splitFrames finds the zstd frames of a compressed payload, read by src,
// that decodes to size bytes, reading only frame and block headers. Every
// frame declares its decoded length, except a payload's only frame (size,
// then).
func splitFrames(src payloadSource, size int64) ([]*groupFrame, error) {
	var frames []*groupFrame
	var start int64
	for off := int64(0); off < src.len(); {
		n, fh, err := frameLen(src, off)
		if err != nil {
			return nil, err
		}
		f := &groupFrame{off: off, n: n, start: start, size: int64(fh.FrameContentSize)}
		switch {
		case !fh.HasFCS && (len(frames) > 0 || n != src.len()):
			return nil, fmt.Errorf("group frame %d does not declare its length", len(frames))
		case !fh.HasFCS:
			f.size = size
		}
		if f.size > size-start {
			return nil, fmt.Errorf("group frames decode past the group's %d bytes", size)
		}
		frames = append(frames, f)
		start += f.size
		off += n
	}
	if start != size || len(frames) == 0 {
		return nil, fmt.Errorf("group frames decode to %d bytes, want %d", start, size)
	}
	return frames, nil
}

// zstdMaxHeader is the longest a zstd frame header can be.
const zstdMaxHeader = 18

// frameLen returns the stored length of the zstd frame at offset off of
// the payload src reads, and its header, walking its block headers.
func frameLen(src payloadSource, off int64) (int64, zstd.Header, error) {
	var fh zstd.Header
	b, err := src.bytes(off, int(min(zstdMaxHeader, src.len()-off)))
	if err != nil {
		return 0, fh, err
	}
	if err := fh.Decode(b); err != nil {
		return 0, fh, fmt.Errorf("undecodable payload: %w", err)
	}
	if fh.Skippable || fh.DictionaryID != 0 {
		return 0, fh, fmt.Errorf("unexpected zstd frame kind in a group")
	}
	rest := src.len() - off // stored bytes from the frame's start on
	n := int64(fh.HeaderSize)
	for last := false; !last; {
		if rest-n < 3 {
			return 0, fh, fmt.Errorf("group frame truncated")
		}
		b, err := src.bytes(off+n, 3)
		if err != nil {
			return 0, fh, err
		}
		bh := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16
		n += 3
		last = bh&1 != 0
		blockLen := int64(bh >> 3)
		if (bh>>1)&3 == 1 { // RLE: one byte repeated
			blockLen = 1
		}
		// A reserved block type is walked over as a raw block: the
		// decoder of its frame refuses it, the other frames stay readable.
		if rest-n < blockLen {
			return 0, fh, fmt.Errorf("group frame truncated")
		}
		n += blockLen
	}
	if fh.HasCheckSum {
		if rest-n < 4 {
			return 0, fh, fmt.Errorf("group frame truncated")
		}
		n += 4
	}
	return n, fh, nil
}

// frameReads is one read of a groupReader. A frame is decoded only as far
// as a read needs, as one stream: the read holds the frame's lock while
// its stream is open, until the frame is decoded whole, the read moves on
// to another frame or it ends, so that a read that needs the table, then
// a member further on in the same frame, streams through the frame once.
// A later read past what an earlier one decoded decodes the frame whole,
// once. A read holds at most one frame at a time.
type frameReads struct {
	g    *groupReader
	c    *codec
	src  payloadSource  // reads the frames not yet read
	held int            // the frame whose lock the read holds, or -1
	d    *prefixDecoder // the held frame's stream
	// checked, for a read through a reader that another operation
	// filled, marks the frames whose stored bytes were checked against
	// the disk (see check): marks of one read, or of every read of one
	// session (verified). nil for a read that trusts what the reader
	// fetched.
	checked verified
}

// verified marks the frames of a group reader that one read, or one
// session, checked against the disk; safe for concurrent use, each frame
// checked by one read at a time and, once it passed, never again.
type verified []verifiedFrame

type verifiedFrame struct {
	mu     sync.Mutex
	passed atomic.Bool
}

// once runs check unless a check of the frame passed, and records whether
// this one did.
func (v *verifiedFrame) once(check func() error) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.passed.Load() {
		return nil
	}
	err := check()
	v.passed.Store(err == nil)
	return err
}

// verify returns marks for g's frames, none checked yet.
func (g *groupReader) verify() verified { return make(verified, len(g.frames)) }

// read starts a read of g whose frames not yet read src reads; with
// checked set, every frame an earlier read fetched and checked does not
// mark is checked against src before its bytes are used, and marked.
// Close it when done.
func (g *groupReader) read(c *codec, src payloadSource, checked verified) *frameReads {
	return &frameReads{g: g, c: c, src: src, held: -1, checked: checked}
}

// close ends the read, releasing the frame it holds.
func (r *frameReads) close() {
	if r.held < 0 {
		return
	}
	r.d.close()
	r.g.frames[r.held].mu.Unlock()
	r.held, r.d = -1, nil
}

// slice returns the payload's bytes [start, end). The error is a reason
// for a CorruptError unless it is a readFailure.
func (r *frameReads) slice(start, end int64) ([]byte, error) {
	if start < 0 || end < start || end > r.g.h.size {
		return nil, fmt.Errorf("group read [%d, %d) out of its %d bytes", start, end, r.g.h.size)
	}
	var joined []byte
	for i, f := range r.g.frames {
		if f.start+f.size <= start || f.start >= end {
			continue
		}
		need := min(end, f.start+f.size) - f.start
		out, err := r.decodeTo(i, need)
		if err != nil {
			return nil, err
		}
		from := max(start, f.start) - f.start
		if joined == nil && f.start+f.size >= end {
			return out[from:need:need], nil
		}
		joined = append(joined, out[from:need]...)
	}
	if joined == nil {
		joined = []byte{}
	}
	return joined, nil
}

// decodeTo returns what was decoded of frame i, at least its first n
// bytes, reading and decoding them when no read did yet.
func (r *frameReads) decodeTo(i int, n int64) ([]byte, error) {
	f := r.g.frames[i]
	if r.checked != nil && !r.checked[i].passed.Load() {
		r.close() // a read holds at most one frame's lock, and none here
		if err := r.checked[i].once(func() error { return r.check(i) }); err != nil {
			return nil, err
		}
	}
	if r.held == i {
		return r.stream(f, n)
	}
	if out := f.decoded(); int64(len(out)) >= n {
		return out, nil
	}
	r.close()
	f.mu.Lock()
	out := f.decoded()
	if int64(len(out)) >= n { // decoded by the read that held it
		f.mu.Unlock()
		return out, nil
	}
	if f.src == nil {
		src, err := r.src.bytes(f.off, int(f.n))
		if err != nil {
			f.mu.Unlock()
			return nil, err
		}
		f.src = src
		f.stored.Store(int64(len(src)))
	}
	if f.raw {
		f.out.Store(&f.src)
		f.mu.Unlock()
		return f.src, nil
	}
	if r.g.decoding != nil {
		r.g.decoding(i)
	}
	if out != nil {
		defer f.mu.Unlock()
		whole, err := r.c.decompress(f.src, f.size)
		if err != nil {
			return nil, err
		}
		f.out.Store(&whole)
		return whole, nil
	}
	d, err := r.c.prefixDecoder(f.src, f.size)
	if err != nil {
		f.mu.Unlock()
		return nil, err
	}
	r.held, r.d = i, d
	return r.stream(f, n)
}

// stream decodes the held frame f up to its first n bytes and publishes
// them, releasing the frame once it is decoded whole or its stream fails.
func (r *frameReads) stream(f *groupFrame, n int64) ([]byte, error) {
	err := r.d.decodeTo(n)
	out := r.d.out
	if err == nil {
		f.out.Store(&out)
	}
	if err != nil || int64(len(out)) == f.size {
		r.close()
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// member returns member loc.Member, its content checked against its table
// id (and want, when not zero), reading the frames not yet read through
// src (and, with checked, checking the others against it: see read). The
// content may be the reader's own bytes: a caller that keeps or changes
// it copies it. Damage is reported through corrupt; a verified frame
// that differs is errCacheStale.
func (g *groupReader) member(c *codec, src payloadSource, checked verified, loc Locator, want ID, corrupt func(string) error) (recordHeader, []byte, error) {
	r := g.read(c, src, checked)
	defer r.close()
	head, err := r.slice(0, min(pack.GroupHeadLen, g.h.size))
	if err != nil {
		return recordHeader{}, nil, damage(err, corrupt)
	}
	tableEnd := int64(len(head))
	if len(head) == pack.GroupHeadLen {
		if n := int64(binary.LittleEndian.Uint32(head)); n > 0 && n <= pack.GroupMaxMembers {
			tableEnd = min(pack.GroupHeadLen+n*pack.GroupEntryLen, g.h.size)
		}
	}
	table, err := r.slice(0, tableEnd)
	if err != nil {
		return recordHeader{}, nil, damage(err, corrupt)
	}
	id, start, end, err := memberSpan(table, g.h.size, loc.Member)
	if err != nil {
		return recordHeader{}, nil, corrupt(err.Error())
	}
	content, err := r.slice(start, end)
	if err != nil {
		return recordHeader{}, nil, damage(err, corrupt)
	}
	return checkMember(id, content, loc, want, corrupt)
}

// whole returns the whole decoded payload, checked against the group's
// id, reading through src and decoding what is not yet decoded (and, with
// checked, checking what was read before against src, as member does).
func (g *groupReader) whole(c *codec, src payloadSource, checked verified, corrupt func(string) error) ([]byte, error) {
	r := g.read(c, src, checked)
	defer r.close()
	p, err := r.slice(0, g.h.size)
	if err != nil {
		return nil, damage(err, corrupt)
	}
	if Sum(p) != g.h.id {
		return nil, corrupt("group does not match its id")
	}
	return p, nil
}
