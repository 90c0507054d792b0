package index

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/ckpt/ckpt/internal/objects"
)

// Kind is the type of a tree entry.
type Kind uint8

// Entry kinds. The numeric values are part of the on-disk tree encoding.
const (
	KindFile    Kind = 1
	KindSymlink Kind = 2
	KindDir     Kind = 3
)

// String returns "file", "symlink" or "dir".
func (k Kind) String() string {
	switch k {
	case KindFile:
		return "file"
	case KindSymlink:
		return "symlink"
	case KindDir:
		return "dir"
	}
	return "unknown"
}

// Entry is one name in a directory.
//
// For a file, ID is the blob id of its content and Size its length. For a
// symlink, ID is the blob id of the link's target text and Size its length.
// For a directory, ID is the id of its Tree and Size is 0.
// Mode holds the permission bits (0o7777 at most: rwx for user, group,
// other, plus setuid, setgid, sticky).
type Entry struct {
	Name string
	Kind Kind
	Mode uint32
	Size int64
	ID   objects.ID
}

// Tree is one directory: its entries sorted by Name (byte order), names
// unique. An empty directory is a Tree with no entries.
type Tree struct {
	Entries []Entry
}

// maxMode is the largest permission-bits value an Entry may carry.
const maxMode = 0o7777

// minEntrySize is the smallest encoding of one tree entry: a one-byte name
// length, a one-byte name, kind, mode, size, and the id.
const minEntrySize = 1 + 1 + 1 + 1 + 1 + 32

// validEntry checks one entry's fields; prev is the previous entry's name
// (ignored for the first entry, i == 0).
func validEntry(e *Entry, i int, prev string) error {
	if err := ValidName(e.Name); err != nil {
		return fmt.Errorf("entry %d: %w", i, err)
	}
	if i > 0 && e.Name <= prev {
		if e.Name == prev {
			return fmt.Errorf("entry %d: duplicate name %q", i, e.Name)
		}
		return fmt.Errorf("entry %d: %q sorts before %q", i, e.Name, prev)
	}
	if e.Kind < KindFile || e.Kind > KindDir {
		return fmt.Errorf("entry %d (%q): unknown kind %d", i, e.Name, e.Kind)
	}
	if e.Mode > maxMode {
		return fmt.Errorf("entry %d (%q): mode %#o has bits beyond 0o7777", i, e.Name, e.Mode)
	}
	if e.Size < 0 || (e.Kind == KindDir && e.Size != 0) {
		return fmt.Errorf("entry %d (%q): invalid size %d for a %s", i, e.Name, e.Size, e.Kind)
	}
	return nil
}

// EncodeTree returns the canonical encoding of t (format in doc.go). It
// fails, without wrapping ErrCorrupt, if an entry name is not a ValidName,
// names are not strictly increasing, a kind is unknown, a mode exceeds
// 0o7777, or a size is negative (or non-zero for a directory).
func EncodeTree(t Tree) ([]byte, error) {
	return appendTree(nil, t)
}

func appendTree(b []byte, t Tree) ([]byte, error) {
	size := 1 + binary.MaxVarintLen64
	for i := range t.Entries {
		size += len(t.Entries[i].Name) + 2*binary.MaxVarintLen64 + 1 + binary.MaxVarintLen32 + objects.IDSize
	}
	b = slices.Grow(b, size)
	b = append(b, encodingVersion)
	b = binary.AppendUvarint(b, uint64(len(t.Entries)))
	for i := range t.Entries {
		e := &t.Entries[i]
		prev := ""
		if i > 0 {
			prev = t.Entries[i-1].Name
		}
		if err := validEntry(e, i, prev); err != nil {
			return nil, fmt.Errorf("index: encode tree: %w", err)
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
// trailing bytes all yield an error wrapping ErrCorrupt. An accepted input
// re-encodes to exactly the same bytes. Decoding makes two allocations
// whatever the entry count; the Names share one copy of b.
func DecodeTree(b []byte) (Tree, error) {
	r := reader{b: b}
	r.version()
	n := r.count(minEntrySize)
	if r.err != nil {
		return Tree{}, r.err
	}
	var t Tree
	if n > 0 {
		t.Entries = make([]Entry, n)
	}
	s := string(b) // every Name is a substring: one allocation for all
	for i := range t.Entries {
		e := &t.Entries[i]
		nameLen := r.uvarint()
		start := r.off
		r.bytes(nameLen)
		e.Kind = Kind(r.byte())
		mode := r.uvarint()
		e.Size = r.int()
		e.ID = r.id()
		if r.err != nil {
			return Tree{}, r.err
		}
		e.Name = s[start : start+int(nameLen)]
		if mode > maxMode {
			return Tree{}, fmt.Errorf("%w: tree entry %d (%q): mode %#o has bits beyond 0o7777", ErrCorrupt, i, e.Name, mode)
		}
		e.Mode = uint32(mode)
		prev := ""
		if i > 0 {
			prev = t.Entries[i-1].Name
		}
		if err := validEntry(e, i, prev); err != nil {
			return Tree{}, fmt.Errorf("%w: tree %w", ErrCorrupt, err)
		}
	}
	if err := r.end(); err != nil {
		return Tree{}, err
	}
	return t, nil
}

// TreeID returns the id of t: objects.Sum of its canonical encoding. It
// fails exactly when EncodeTree does.
func TreeID(t Tree) (objects.ID, error) {
	b, err := EncodeTree(t)
	if err != nil {
		return objects.ID{}, err
	}
	return objects.Sum(b), nil
}
