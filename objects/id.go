package objects

import (
	"bytes"
	"encoding/hex"
	"fmt"

	"github.com/zeebo/blake3"
)

// IDSize is the length in bytes of an ID.
const IDSize = 32

// ShortIDLen is the number of hex characters in the short display form of an ID.
const ShortIDLen = 12

// ID is the BLAKE3-256 digest of a blob's raw content (or, for trees and
// checkpoints, of their canonical encoding). The zero ID means "none".
type ID [IDSize]byte

// Sum returns the ID of data.
func Sum(data []byte) ID {
	return ID(blake3.Sum256(data))
}

// ParseID parses the 64-character lowercase or uppercase hex form of an ID.
func ParseID(s string) (ID, error) {
	var id ID
	if len(s) != 2*IDSize {
		return id, fmt.Errorf("invalid id %q: want %d hex characters, got %d", s, 2*IDSize, len(s))
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return id, fmt.Errorf("invalid id %q: %w", s, err)
	}
	return id, nil
}

// String returns the 64-character lowercase hex form of id.
func (id ID) String() string {
	return hex.EncodeToString(id[:])
}

// Short returns the first ShortIDLen hex characters of id, for display.
func (id ID) Short() string {
	return id.String()[:ShortIDLen]
}

// IsZero reports whether id is the zero ID.
func (id ID) IsZero() bool {
	return id == ID{}
}

// CompareIDs orders ids bytewise, the order of their keys in the index
// (for slices.SortFunc).
func CompareIDs(a, b ID) int { return bytes.Compare(a[:], b[:]) }

// MarshalText implements encoding.TextMarshaler (hex form; the zero ID encodes as "").
func (id ID) MarshalText() ([]byte, error) {
	if id.IsZero() {
		return []byte{}, nil
	}
	return []byte(id.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler; "" decodes to the zero ID.
func (id *ID) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*id = ID{}
		return nil
	}
	v, err := ParseID(string(b))
	if err != nil {
		return err
	}
	*id = v
	return nil
}
