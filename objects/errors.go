package objects

import (
	"errors"
	"fmt"
)

// ErrNotFound is returned when a blob is neither in the index nor pending in
// the batch that was asked.
var ErrNotFound = errors.New("blob not found")

// ErrCorrupt is the one mark of damaged store data, matched with errors.Is
// by every error that reports it, whichever layer found the damage: a
// record that does not verify, a pack that is missing or truncated, a
// malformed locator here; an index value that does not decode, a damaged
// index file, a remote object that does not verify above. It is never
// matched by an I/O failure that says nothing about the data. The engine
// re-exports it as engine.ErrCorrupt.
var ErrCorrupt = errors.New("store corrupt")

// MarkCorrupt returns err marked as damage: errors.Is(result, ErrCorrupt)
// holds, its text is err's, and errors.Is and errors.As still reach err and
// what it wraps. A nil err, or one marked already, is returned as is.
func MarkCorrupt(err error) error {
	if err == nil || errors.Is(err, ErrCorrupt) {
		return err
	}
	return &corruptMark{err}
}

// corruptMark is an error marked by MarkCorrupt.
type corruptMark struct{ err error }

func (m *corruptMark) Error() string        { return m.err.Error() }
func (m *corruptMark) Unwrap() error        { return m.err }
func (m *corruptMark) Is(target error) bool { return target == ErrCorrupt }

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
	msg := ""
	if e.Pack != "" {
		msg = fmt.Sprintf("pack %s at offset %d", e.Pack, e.Offset)
	}
	if !e.ID.IsZero() {
		if msg != "" {
			msg += " "
		}
		msg += "(blob " + e.ID.Short() + ")"
	}
	if msg == "" {
		return e.Reason
	}
	return msg + ": " + e.Reason
}

// Is reports whether target is ErrCorrupt.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }
