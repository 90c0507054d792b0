package objects

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/ckpt/ckpt/objects/internal/pack"
)

// Flags describe how a record's payload is stored (the pack format's
// record flags, objects/internal/pack); Locator.Chunked and
// Locator.Grouped say what a caller needs of them.
type Flags = pack.Flags

// The first byte of an encoded Locator: version 1 for a record of its own,
// version 2 (one more varint, the member) for a blob in a group record.
const (
	locatorVersion      = 1
	locatorVersionGroup = 2
)

// Locator says where a blob's record lives: pack number, byte offset of the
// record, on-disk record length (header included), flags, and the raw
// content length (the whole file's length for chunked blobs). A blob
// stored in a group record (Grouped) shares the record's Offset and
// Length with the other members of its group; Member is its position in
// the group, and Size its own length. Member is 0 for other records.
type Locator struct {
	Pack   uint32
	Offset int64
	Length uint32
	Flags  Flags
	Size   int64
	Member uint32
}

// Chunked reports whether l is the record of a large file's chunk list:
// its chunks are blobs of their own (Store.ChunkList), and Size is the
// whole file's length.
func (l Locator) Chunked() bool { return l.Flags&pack.FlagChunked != 0 }

// Grouped reports whether l names a member of a group record, whose
// Offset and Length it shares with the other members.
func (l Locator) Grouped() bool { return l.Flags&pack.FlagGroup != 0 }

// AppendBinary appends the compact encoding of l to b: a version byte, the
// flags byte, then pack, offset, length and size as unsigned varints, and
// for a group member (version 2) the member index. The index stores it as
// the value of a blob key.
func (l Locator) AppendBinary(b []byte) []byte {
	version := byte(locatorVersion)
	if l.Flags&pack.FlagGroup != 0 {
		version = locatorVersionGroup
	}
	b = append(b, version, byte(l.Flags))
	b = binary.AppendUvarint(b, uint64(l.Pack))
	b = binary.AppendUvarint(b, uint64(l.Offset))
	b = binary.AppendUvarint(b, uint64(l.Length))
	b = binary.AppendUvarint(b, uint64(l.Size))
	if version == locatorVersionGroup {
		b = binary.AppendUvarint(b, uint64(l.Member))
	}
	return b
}

// ParseLocator decodes the output of AppendBinary. Any malformed input
// (unknown version or flags, truncated, overlong or non-minimal varints, values out of
// range, trailing bytes) yields a *CorruptError.
func ParseLocator(b []byte) (Locator, error) {
	bad := func(reason string) (Locator, error) {
		return Locator{}, &CorruptError{Reason: "locator " + reason}
	}
	if len(b) < 2 {
		return bad("too short")
	}
	if b[0] != locatorVersion && b[0] != locatorVersionGroup {
		return bad(fmt.Sprintf("has unknown version %d", b[0]))
	}
	l := Locator{Flags: Flags(b[1])}
	switch {
	case l.Flags&^pack.KnownFlags != 0:
		return bad(fmt.Sprintf("has unknown flags %#x", b[1]))
	case (l.Flags&pack.FlagGroup != 0) != (b[0] == locatorVersionGroup):
		return bad(fmt.Sprintf("version %d does not match flags %#x", b[0], b[1]))
	}
	rest := b[2:]
	vals := make([]uint64, 4, 5)
	if b[0] == locatorVersionGroup {
		vals = vals[:5]
	}
	limits := [5]uint64{math.MaxUint32, math.MaxInt64, math.MaxUint32, math.MaxInt64, pack.GroupMaxMembers - 1}
	for i := range vals {
		v, n := binary.Uvarint(rest)
		if n <= 0 || (n > 1 && rest[n-1] == 0) {
			return bad("has a malformed or non-minimal varint")
		}
		if v > limits[i] {
			return bad("has a value out of range")
		}
		vals[i], rest = v, rest[n:]
	}
	if len(rest) != 0 {
		return bad("has trailing bytes")
	}
	l.Pack, l.Offset, l.Length, l.Size = uint32(vals[0]), int64(vals[1]), uint32(vals[2]), int64(vals[3])
	if len(vals) == 5 {
		l.Member = uint32(vals[4])
	}
	return l, nil
}

// LocatorIndex maps committed blob ids to their locators. It is implemented
// by the Pebble index. Implementations must be safe for concurrent use and
// return found=false (and a nil error) for an id they do not hold.
type LocatorIndex interface {
	Locator(id ID) (loc Locator, found bool, err error)
}

// Placement is one record written by a Batch: the caller commits ID → Loc
// to its index after Sync returns it.
type Placement struct {
	ID  ID
	Loc Locator
}
