package objects

import (
	"errors"
	"fmt"
)

// ErrNotFound is returned when a blob is neither in the index nor pending in
// the batch that was asked.
var ErrNotFound = errors.New("objects: blob not found")

// ErrCorrupt is matched (with errors.Is) by every error that reports damaged
// store data: a record that does not verify, a pack that is missing or
// truncated, a malformed locator. It is never returned for I/O failures that
// say nothing about the data.
var ErrCorrupt = errors.New("objects: corrupt")

// CorruptError reports damaged store data at a known place. Pack is the pack
// file's path ("" when no pack is involved, e.g. a malformed locator), Offset
// the byte offset of the record in it, ID the blob being read when known.
// errors.Is(err, ErrCorrupt) holds for every *CorruptError.
type CorruptError struct {
	Pack   string
	Offset int64
	ID     ID
	Reason string
}

// Error names the pack and offset, then the blob and the reason.
func (e *CorruptError) Error() string {
	msg := "objects: corrupt"
	if e.Pack != "" {
		msg += fmt.Sprintf(" pack %s at offset %d", e.Pack, e.Offset)
	}
	if !e.ID.IsZero() {
		msg += " (blob " + e.ID.Short() + ")"
	}
	return msg + ": " + e.Reason
}

// Unwrap returns ErrCorrupt.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// Is reports whether target is ErrCorrupt.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }
