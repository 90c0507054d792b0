package objects

import (
	"encoding/binary"
	"fmt"
	"sync"

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

// groupFrame is one zstd frame of a group's stored payload, or a raw
// payload as one frame that needs no decoding.
type groupFrame struct {
	src   []byte // the frame as stored; nil for a raw payload
	start int64  // offset of the frame's first decoded byte in the payload
	size  int64  // decoded length
	out   []byte // what was decoded: the frame's first len(out) bytes
}

// groupReader reads parts of one group record's decoded payload, decoding
// only the frames that hold them and each of those at most up to what was
// asked (see groupFrame). It keeps what it decoded, for the members read
// next. Safe for concurrent use; the slices it returns are never changed.
type groupReader struct {
	h      recordHeader
	stored []byte
	mu     sync.Mutex
	frames []groupFrame
}

// newGroupReader indexes the frames of the group record with header h and
// stored payload stored. The error is a reason for a CorruptError.
func newGroupReader(h recordHeader, stored []byte) (*groupReader, error) {
	g := &groupReader{h: h, stored: stored}
	switch {
	case h.size > maxGroupSize:
		return nil, fmt.Errorf("group size %d out of range", h.size)
	case h.flags&pack.FlagCompressed == 0:
		if int64(len(stored)) != h.size {
			return nil, fmt.Errorf("group record does not match its size")
		}
		g.frames = []groupFrame{{size: h.size, out: stored}}
		return g, nil
	}
	frames, err := splitFrames(stored, h.size)
	g.frames = frames
	return g, err
}

// splitFrames finds the zstd frames of a compressed payload that decodes
// to size bytes, reading only frame and block headers. Every frame
// declares its decoded length, except a payload's only frame (size, then).
func splitFrames(stored []byte, size int64) ([]groupFrame, error) {
	var frames []groupFrame
	var start int64
	for rest := stored; len(rest) > 0; {
		n, fh, err := frameLen(rest)
		if err != nil {
			return nil, err
		}
		f := groupFrame{src: rest[:n], start: start, size: int64(fh.FrameContentSize)}
		switch {
		case !fh.HasFCS && (len(frames) > 0 || n != len(stored)):
			return nil, fmt.Errorf("group frame %d does not declare its length", len(frames))
		case !fh.HasFCS:
			f.size = size
		}
		if f.size > size-start {
			return nil, fmt.Errorf("group frames decode past the group's %d bytes", size)
		}
		frames = append(frames, f)
		start += f.size
		rest = rest[n:]
	}
	if start != size || len(frames) == 0 {
		return nil, fmt.Errorf("group frames decode to %d bytes, want %d", start, size)
	}
	return frames, nil
}

// frameLen returns the stored length of the zstd frame at the start of b
// and its header, walking its block headers.
func frameLen(b []byte) (int, zstd.Header, error) {
	var fh zstd.Header
	if err := fh.Decode(b); err != nil {
		return 0, fh, fmt.Errorf("undecodable payload: %w", err)
	}
	if fh.Skippable || fh.DictionaryID != 0 {
		return 0, fh, fmt.Errorf("unexpected zstd frame kind in a group")
	}
	n := fh.HeaderSize
	for last := false; !last; {
		if len(b)-n < 3 {
			return 0, fh, fmt.Errorf("group frame truncated")
		}
		bh := uint32(b[n]) | uint32(b[n+1])<<8 | uint32(b[n+2])<<16
		n += 3
		last = bh&1 != 0
		blockLen := int(bh >> 3)
		if (bh>>1)&3 == 1 { // RLE: one byte repeated
			blockLen = 1
		}
		// A reserved block type is walked over as a raw block: the
		// decoder of its frame refuses it, the other frames stay readable.
		if len(b)-n < blockLen {
			return 0, fh, fmt.Errorf("group frame truncated")
		}
		n += blockLen
	}
	if fh.HasCheckSum {
		if len(b)-n < 4 {
			return 0, fh, fmt.Errorf("group frame truncated")
		}
		n += 4
	}
	return n, fh, nil
}

// frameReads is one read of a groupReader, under its lock: the frames it
// started decoding stay open until close, so a read that needs the table,
// then a member further on in the same frame, streams through the frame
// once.
type frameReads struct {
	g    *groupReader
	c    *codec
	open map[int]*prefixDecoder
}

// read starts a read of g; close it when done.
func (g *groupReader) read(c *codec) *frameReads {
	g.mu.Lock()
	return &frameReads{g: g, c: c, open: map[int]*prefixDecoder{}}
}

func (r *frameReads) close() {
	for _, d := range r.open {
		d.close()
	}
	r.g.mu.Unlock()
}

// slice returns the payload's bytes [start, end). The error is a reason
// for a CorruptError.
func (r *frameReads) slice(start, end int64) ([]byte, error) {
	if start < 0 || end < start || end > r.g.h.size {
		return nil, fmt.Errorf("group read [%d, %d) out of its %d bytes", start, end, r.g.h.size)
	}
	var joined []byte
	for i := range r.g.frames {
		f := &r.g.frames[i]
		if f.start+f.size <= start || f.start >= end {
			continue
		}
		need := min(end, f.start+f.size) - f.start
		if err := r.decodeTo(i, need); err != nil {
			return nil, err
		}
		from := max(start, f.start) - f.start
		if joined == nil && f.start+f.size >= end {
			return f.out[from:need:need], nil
		}
		joined = append(joined, f.out[from:need]...)
	}
	if joined == nil {
		joined = []byte{}
	}
	return joined, nil
}

// decodeTo makes frame i's out hold at least its first n bytes. A frame
// is decoded only as far as needed, as one stream for the whole read; a
// later read past what an earlier one decoded decodes the frame whole,
// once.
func (r *frameReads) decodeTo(i int, n int64) error {
	f := &r.g.frames[i]
	if int64(len(f.out)) >= n {
		return nil
	}
	d := r.open[i]
	if d == nil && f.out != nil {
		out, err := r.c.decompress(f.src, f.size)
		if err == nil {
			f.out = out
		}
		return err
	}
	if d == nil {
		var err error
		if d, err = r.c.prefixDecoder(f.src, f.size); err != nil {
			return err
		}
		r.open[i] = d
	}
	if err := d.decodeTo(n); err != nil {
		return err
	}
	f.out = d.out
	return nil
}

// member returns member loc.Member, its content checked against its table
// id (and want, when not zero). The content may be the reader's own
// bytes: a caller that keeps or changes it copies it. Damage is reported
// through corrupt.
func (g *groupReader) member(c *codec, loc Locator, want ID, corrupt func(string) error) (recordHeader, []byte, error) {
	r := g.read(c)
	defer r.close()
	head, err := r.slice(0, min(pack.GroupHeadLen, g.h.size))
	if err != nil {
		return recordHeader{}, nil, corrupt(err.Error())
	}
	tableEnd := int64(len(head))
	if len(head) == pack.GroupHeadLen {
		if n := int64(binary.LittleEndian.Uint32(head)); n > 0 && n <= pack.GroupMaxMembers {
			tableEnd = min(pack.GroupHeadLen+n*pack.GroupEntryLen, g.h.size)
		}
	}
	table, err := r.slice(0, tableEnd)
	if err != nil {
		return recordHeader{}, nil, corrupt(err.Error())
	}
	id, start, end, err := memberSpan(table, g.h.size, loc.Member)
	if err != nil {
		return recordHeader{}, nil, corrupt(err.Error())
	}
	content, err := r.slice(start, end)
	if err != nil {
		return recordHeader{}, nil, corrupt(err.Error())
	}
	return checkMember(id, content, loc, want, corrupt)
}

// whole returns the whole decoded payload, checked against the group's
// id, decoding what is not yet decoded.
func (g *groupReader) whole(c *codec, corrupt func(string) error) ([]byte, error) {
	r := g.read(c)
	defer r.close()
	p, err := r.slice(0, g.h.size)
	if err != nil {
		return nil, corrupt(err.Error())
	}
	if Sum(p) != g.h.id {
		return nil, corrupt("group does not match its id")
	}
	return p, nil
}
