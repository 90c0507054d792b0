package engine

import (
	"encoding/hex"
	"fmt"
)

// ID identifies a checkpoint, tree or blob: the BLAKE3-256 digest of its
// content (or canonical encoding). The zero ID means "none".
type ID [32]byte

// ParseID parses the 64-character hex form of an ID (either case).
func ParseID(s string) (ID, error) {
	var id ID
	if len(s) != 2*len(id) {
		return id, fmt.Errorf("%w: invalid id %q: want %d hex characters, got %d", ErrBadRequest, s, 2*len(id), len(s))
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return ID{}, fmt.Errorf("%w: invalid id %q: %w", ErrBadRequest, s, err)
	}
	return id, nil
}

// String returns the 64-character lowercase hex form of id.
func (id ID) String() string { return hex.EncodeToString(id[:]) }

// Short returns the first 12 hex characters of id, for display.
func (id ID) Short() string { return id.String()[:12] }

// IsZero reports whether id is the zero ID.
func (id ID) IsZero() bool { return id == ID{} }

// Text is id's hex form, or "" for the zero ID (an absent parent, backup
// or state).
func (id ID) Text() string {
	if id.IsZero() {
		return ""
	}
	return id.String()
}

// MarshalText encodes id as Text (the zero ID as "").
func (id ID) MarshalText() ([]byte, error) { return []byte(id.Text()), nil }

// UnmarshalText decodes the hex form; "" decodes to the zero ID.
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

// publicIDs converts internal ids to public ones.
func publicIDs[T ~[32]byte](in []T) []ID {
	out := make([]ID, len(in))
	for i, id := range in {
		out[i] = ID(id)
	}
	return out
}
