package engine

import "github.com/ckpt/ckpt/objects"

// ID identifies a checkpoint, tree or blob: the BLAKE3-256 digest of its
// content (or canonical encoding). The zero ID means "none".
type ID [32]byte

// ParseID parses the 64-character hex form of an ID (either case); other
// text fails with ErrBadRequest.
func ParseID(s string) (ID, error) {
	id, err := objects.ParseID(s)
	if err != nil {
		return ID{}, &publicError{public: ErrBadRequest, err: err}
	}
	return ID(id), nil
}

// String returns the 64-character lowercase hex form of id.
func (id ID) String() string { return objects.ID(id).String() }

// Short returns the first 12 hex characters of id, for display.
func (id ID) Short() string { return objects.ID(id).Short() }

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
func (id *ID) UnmarshalText(b []byte) error { return (*objects.ID)(id).UnmarshalText(b) }

// publicIDs converts internal ids to public ones.
func publicIDs[T ~[32]byte](in []T) []ID {
	out := make([]ID, len(in))
	for i, id := range in {
		out[i] = ID(id)
	}
	return out
}
