package objects

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/ckpt/ckpt/objects/internal/pack"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// packHeader returns the header every pack file written now starts with.
func packHeader() []byte { return packHeaderOf(pack.Version) }

// packHeaderOf returns the pack header of a format version.
func packHeaderOf(version uint32) []byte {
	h := make([]byte, 0, pack.HeaderLen)
	h = append(h, pack.Magic...)
	return binary.LittleEndian.AppendUint32(h, version)
}

// packVersionOf returns the version of a pack header, or 0 when b is not
// the header of a version this package reads.
func packVersionOf(b []byte) uint32 {
	for _, v := range [...]uint32{pack.Version, pack.Version2, pack.Version1} {
		if bytes.Equal(b, packHeaderOf(v)) {
			return v
		}
	}
	return 0
}

// readPackVersion reads the first bytes of pack file f (at path) and
// returns its format version, or a *CorruptError unless they are the
// header of a version this package reads. Readers call it before trusting
// any locator into the pack: a record can verify on its own while the pack
// around it is damaged.
func readPackVersion(f io.ReaderAt, path string) (uint32, error) {
	got := make([]byte, pack.HeaderLen)
	n, err := f.ReadAt(got, 0)
	if n < len(got) && err != io.EOF {
		return 0, fmt.Errorf("read pack header %s: %w", path, err)
	}
	if v := packVersionOf(got[:n]); v != 0 {
		return v, nil
	}
	return 0, &CorruptError{Pack: path, Reason: "bad pack header"}
}

// recordHeader is the decoded fixed-size prefix of a record.
type recordHeader struct {
	flags      Flags
	id         ID
	size       int64  // raw content length (whole file for chunked records)
	payloadLen uint32 // stored payload length
	// depth is a delta's depth once its record is decoded (0 for other
	// records): how many deltas a read of it decodes.
	depth int
}

// recordLen is the on-disk length of the record, header included.
func (h recordHeader) recordLen() int64 { return int64(pack.RecordHeaderLen) + int64(h.payloadLen) }

// appendRecordHeader appends the encoding of h, check included.
func appendRecordHeader(b []byte, h recordHeader) []byte {
	start := len(b)
	b = append(b, pack.RecordMagic...)
	b = append(b, byte(h.flags))
	b = append(b, h.id[:]...)
	b = binary.LittleEndian.AppendUint64(b, uint64(h.size))
	b = binary.LittleEndian.AppendUint32(b, h.payloadLen)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli))
}

// parseRecordHeader decodes and checks a record header. The returned error
// is a reason for a CorruptError, which the caller builds with the place.
func parseRecordHeader(b []byte) (recordHeader, error) {
	var h recordHeader
	if len(b) < pack.RecordHeaderLen {
		return h, fmt.Errorf("record header truncated")
	}
	b = b[:pack.RecordHeaderLen]
	if string(b[:4]) != pack.RecordMagic {
		return h, fmt.Errorf("bad record magic")
	}
	if crc32.Checksum(b[:pack.RecordHeaderLen-4], castagnoli) != binary.LittleEndian.Uint32(b[pack.RecordHeaderLen-4:]) {
		return h, fmt.Errorf("record header check mismatch")
	}
	h.flags = Flags(b[4])
	copy(h.id[:], b[5:5+IDSize])
	size := binary.LittleEndian.Uint64(b[5+IDSize:])
	h.payloadLen = binary.LittleEndian.Uint32(b[13+IDSize:])
	switch {
	case h.flags&^pack.KnownFlags != 0:
		return h, fmt.Errorf("unknown record flags %#x", byte(h.flags))
	case h.flags&pack.FlagChunked != 0 && h.flags != pack.FlagChunked:
		return h, fmt.Errorf("chunk lists are never compressed or grouped")
	case h.flags&pack.FlagDelta != 0 && h.flags != pack.FlagDelta:
		return h, fmt.Errorf("delta records carry no other flag")
	case h.flags == pack.FlagDelta && (h.payloadLen <= pack.DeltaHeadLen || size > deltaMax):
		return h, fmt.Errorf("delta record of %d bytes with a %d-byte payload", size, h.payloadLen)
	case size > 1<<62:
		return h, fmt.Errorf("record size %d out of range", size)
	case h.payloadLen > pack.MaxPayload:
		return h, fmt.Errorf("payload length %d out of range", h.payloadLen)
	case h.flags&(pack.FlagCompressed|pack.FlagChunked|pack.FlagDelta) == 0 && uint64(h.payloadLen) != size:
		return h, fmt.Errorf("raw payload length %d differs from size %d", h.payloadLen, size)
	}
	h.size = int64(size)
	return h, nil
}

// recordInPack checks that a pack of the given version may hold a record
// with flags f (groups came with version 2, deltas with version 3). The
// error is a reason for a CorruptError.
func recordInPack(f Flags, version uint32) error {
	if version < pack.MinVersion(f) {
		return fmt.Errorf("record with flags %#x in a version-%d pack", byte(f), version)
	}
	return nil
}

// chunkRef is one entry of a chunk list.
type chunkRef struct {
	id   ID
	size uint32
}

// appendChunkList appends the payload of a chunked record.
func appendChunkList(b []byte, chunks []chunkRef) []byte {
	for _, c := range chunks {
		b = append(b, c.id[:]...)
		b = binary.LittleEndian.AppendUint32(b, c.size)
	}
	return b
}

// parseChunkList decodes a chunk-list payload and checks that its chunk
// sizes add up to size. The error is a reason for a CorruptError.
func parseChunkList(p []byte, size int64) ([]chunkRef, error) {
	if len(p)%pack.ChunkEntryLen != 0 || len(p) == 0 {
		return nil, fmt.Errorf("chunk list length %d is not a positive multiple of %d", len(p), pack.ChunkEntryLen)
	}
	chunks := make([]chunkRef, len(p)/pack.ChunkEntryLen)
	var total int64
	for i := range chunks {
		e := p[i*pack.ChunkEntryLen:]
		copy(chunks[i].id[:], e[:IDSize])
		chunks[i].size = binary.LittleEndian.Uint32(e[IDSize:])
		if chunks[i].size == 0 || chunks[i].size > maxBlobSize {
			return nil, fmt.Errorf("chunk %d has size %d", i, chunks[i].size)
		}
		total += int64(chunks[i].size)
	}
	if total != size {
		return nil, fmt.Errorf("chunks add up to %d bytes, record says %d", total, size)
	}
	return chunks, nil
}
