package index

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/ckpt/ckpt/objects"
)

// maxMode is the largest permission-bits value an objects.Entry may carry.
const maxMode = 0o7777

// minEntrySize is the smallest encoding of one tree entry: a one-byte name
// length, a one-byte name, kind, mode, size, and the id.
const minEntrySize = 1 + 1 + 1 + 1 + 1 + 32

// validEntry checks one entry's fields; prev is the previous entry's name
// (ignored for the first entry, i == 0).
func validEntry(e *objects.Entry, i int, prev string) error {
	if err := objects.ValidName(e.Name); err != nil {
		return fmt.Errorf("entry %d: %w", i, err)
	}
	if i > 0 && e.Name <= prev {
		if e.Name == prev {
			return fmt.Errorf("entry %d: duplicate name %q", i, e.Name)
		}
		return fmt.Errorf("entry %d: %q sorts before %q", i, e.Name, prev)
	}
	if e.Kind < objects.KindFile || e.Kind > objects.KindDir {
		return fmt.Errorf("entry %d (%q): unknown kind %d", i, e.Name, e.Kind)
	}
	if e.Mode > maxMode {
		return fmt.Errorf("entry %d (%q): mode %#o has bits beyond 0o7777", i, e.Name, e.Mode)
	}
	if e.Size < 0 || (e.Kind == objects.KindDir && e.Size != 0) {
		return fmt.Errorf("entry %d (%q): invalid size %d for a %s", i, e.Name, e.Size, e.Kind)
	}
	return nil
}

// EncodeTree returns the canonical encoding of t (format in doc.go). It
// fails, without the objects.ErrCorrupt mark, if an entry name is not a objects.ValidName,
// names are not strictly increasing, a kind is unknown, a mode exceeds
// 0o7777, or a size is negative (or non-zero for a directory).
func EncodeTree(t objects.Tree) ([]byte, error) {
	return appendTree(nil, t)
}

func appendTree(b []byte, t objects.Tree) ([]byte, error) {
	size := 1 + binary.MaxVarintLen64
	for i := range t.Entries {
		size += len(t.Entries[i].Name) + 2*binary.MaxVarintLen64 + 1 + binary.MaxVarintLen32 + objects.IDSize
	}
	b = slices.Grow(b, size)
	b = append(b, encodingVersion)
	b = binary.AppendUvarint(b, uint64(len(t.Entries)))
	return appendEntries(b, t.Entries)
}

// appendEntries appends the encodings of entries, which must be valid and
// strictly increasing by name.
func appendEntries(b []byte, entries []objects.Entry) ([]byte, error) {
	for i := range entries {
		e := &entries[i]
		prev := ""
		if i > 0 {
			prev = entries[i-1].Name
		}
		if err := validEntry(e, i, prev); err != nil {
			return nil, fmt.Errorf("encode tree: %w", err)
		}
		b = appendString(b, e.Name)
		b = append(b, byte(e.Kind))
		b = binary.AppendUvarint(b, uint64(e.Mode))
		b = binary.AppendUvarint(b, uint64(e.Size))
		b = append(b, e.ID[:]...)
	}
	return b, nil
}

// DecodeTree parses a tree encoding. It never panics; malformed or
// truncated input, an unsupported version, invalid names, unsorted or
// duplicate entries, unknown kinds, out-of-range modes or sizes, and
// trailing bytes all yield an error marked with objects.ErrCorrupt. An accepted input
// re-encodes to exactly the same bytes. Decoding makes two allocations
// whatever the entry count; the Names share one copy of b.
func DecodeTree(b []byte) (objects.Tree, error) {
	r := reader{b: b}
	r.version()
	n := r.count(minEntrySize)
	if r.err != nil {
		return objects.Tree{}, r.err
	}
	var t objects.Tree
	if n > 0 {
		t.Entries = make([]objects.Entry, n)
	}
	if err := r.entries(string(b), t.Entries); err != nil {
		return objects.Tree{}, err
	}
	if err := r.end(); err != nil {
		return objects.Tree{}, err
	}
	return t, nil
}

// entries reads len(dst) tree entries into dst. s is the whole input as a
// string: every Name is a substring of it, so all share one allocation.
func (r *reader) entries(s string, dst []objects.Entry) error {
	for i := range dst {
		e := &dst[i]
		nameLen := r.uvarint()
		start := r.off
		r.bytes(nameLen)
		e.Kind = objects.Kind(r.byte())
		mode := r.uvarint()
		e.Size = r.int()
		e.ID = r.id()
		if r.err != nil {
			return r.err
		}
		e.Name = s[start : start+int(nameLen)]
		if mode > maxMode {
			return objects.MarkCorrupt(fmt.Errorf("tree entry %d (%q): mode %#o has bits beyond 0o7777", i, e.Name, mode))
		}
		e.Mode = uint32(mode)
		prev := ""
		if i > 0 {
			prev = dst[i-1].Name
		}
		if err := validEntry(e, i, prev); err != nil {
			return objects.MarkCorrupt(fmt.Errorf("tree %w", err))
		}
	}
	return nil
}

// TreeID returns the id of t: objects.Sum of its canonical encoding. It
// fails exactly when EncodeTree does.
func TreeID(t objects.Tree) (objects.ID, error) {
	b, err := EncodeTree(t)
	if err != nil {
		return objects.ID{}, err
	}
	return objects.Sum(b), nil
}
