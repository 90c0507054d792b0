package objects

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Flags describe how a record's payload is stored.
type Flags uint8

const (
	// FlagCompressed marks a payload stored as one zstd frame.
	FlagCompressed Flags = 1 << iota
	// FlagChunked marks a payload that is the chunk list of a large file
	// (see doc.go); the chunks are blobs of their own.
	FlagChunked

	knownFlags = FlagCompressed | FlagChunked
)

// locatorVersion is the first byte of every encoded Locator.
const locatorVersion = 1

// Locator says where a blob's record lives: pack number, byte offset of the
// record, on-disk record length (header included), flags, and the raw
// content length (the whole file's length for FlagChunked blobs).
type Locator struct {
	Pack   uint32
	Offset int64
	Length uint32
	Flags  Flags
	Size   int64
}

// AppendBinary appends the compact encoding of l to b: a version byte, the
// flags byte, then pack, offset, length and size as unsigned varints. The
// index stores it as the value of a blob key.
func (l Locator) AppendBinary(b []byte) []byte {
	b = append(b, locatorVersion, byte(l.Flags))
	b = binary.AppendUvarint(b, uint64(l.Pack))
	b = binary.AppendUvarint(b, uint64(l.Offset))
	b = binary.AppendUvarint(b, uint64(l.Length))
	return binary.AppendUvarint(b, uint64(l.Size))
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
	if b[0] != locatorVersion {
		return bad(fmt.Sprintf("has unknown version %d", b[0]))
	}
	l := Locator{Flags: Flags(b[1])}
	if l.Flags&^knownFlags != 0 {
		return bad(fmt.Sprintf("has unknown flags %#x", b[1]))
	}
	rest := b[2:]
	var vals [4]uint64
	limits := [4]uint64{math.MaxUint32, math.MaxInt64, math.MaxUint32, math.MaxInt64}
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
