package remotesync

import (
	"encoding/binary"
	"fmt"

	"github.com/klauspost/compress/zstd"

	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/objects"
)

const segmentMagic = "CKPTSEG1"

// maxSegment bounds a segment's decoded size (and so the memory a hostile
// one can claim).
const maxSegment = 4 << 30

// blobLoc is one entry of a segment's locator table.
type blobLoc struct {
	ID  objects.ID
	Loc Loc
}

// segment is the decoded content of a metadata segment (doc.go).
type segment struct {
	Trees       []objects.Tree
	Checkpoints []index.Checkpoint
	Locs        []blobLoc
}

// encodeSegment returns the stored bytes of a segment holding the given
// tree and checkpoint encodings and locators.
func encodeSegment(trees, cps [][]byte, locs []blobLoc) ([]byte, error) {
	b := []byte(segmentMagic)
	for _, list := range [][][]byte{trees, cps} {
		b = binary.AppendUvarint(b, uint64(len(list)))
		for _, enc := range list {
			b = binary.AppendUvarint(b, uint64(len(enc)))
			b = append(b, enc...)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(locs)))
	for _, l := range locs {
		b = append(b, l.ID[:]...)
		b = appendLoc(b, l.Loc)
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault))
	if err != nil {
		return nil, err
	}
	defer enc.Close()
	return enc.EncodeAll(b, nil), nil
}

// decodeSegment decodes stored, which the caller checked against its
// name. Every tree and checkpoint must decode; their ids are computed from
// their bytes.
func decodeSegment(key string, stored []byte) (*segment, error) {
	bad := func(reason string, err error) (*segment, error) {
		return nil, &CorruptError{Key: key, Reason: reason, Err: err}
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(maxSegment), zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	raw, err := dec.DecodeAll(stored, nil)
	if err != nil {
		return bad("segment does not decompress", err)
	}
	if len(raw) < len(segmentMagic) || string(raw[:len(segmentMagic)]) != segmentMagic {
		return bad("bad segment magic", nil)
	}
	d := decoder{b: raw[len(segmentMagic):]}
	seg := &segment{}
	for n := d.uvarint(uint64(len(d.b))); n > 0 && d.err == nil; n-- {
		t, err := index.DecodeTree(d.bytes(d.uvarint(uint64(len(d.b)))))
		if err != nil && d.err == nil {
			return bad("tree does not decode", err)
		}
		seg.Trees = append(seg.Trees, t)
	}
	for n := d.uvarint(uint64(len(d.b))); n > 0 && d.err == nil; n-- {
		c, err := index.DecodeCheckpoint(d.bytes(d.uvarint(uint64(len(d.b)))))
		if err != nil && d.err == nil {
			return bad("checkpoint does not decode", err)
		}
		seg.Checkpoints = append(seg.Checkpoints, c)
	}
	for n := d.uvarint(uint64(len(d.b))); n > 0 && d.err == nil; n-- {
		id := d.id()
		seg.Locs = append(seg.Locs, blobLoc{ID: id, Loc: d.loc()})
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail(fmt.Sprintf("%d trailing bytes", len(d.b)))
	}
	if d.err != nil {
		return bad("segment does not decode", d.err)
	}
	return seg, nil
}
