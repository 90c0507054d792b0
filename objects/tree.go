package objects

import (
	"errors"
	"fmt"
	"strings"
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
	ID   ID
}

// Tree is one directory: its entries sorted by Name (byte order), names
// unique. An empty directory is a Tree with no entries.
type Tree struct {
	Entries []Entry
}

// ValidName reports whether name can be a tree entry name: it must not be
// empty, "." or "..", and must not contain '/' or NUL. The error, if any,
// quotes the name.
func ValidName(name string) error {
	switch {
	case name == "":
		return errors.New("invalid name: empty")
	case name == "." || name == "..":
		return fmt.Errorf("invalid name %q", name)
	case strings.IndexByte(name, '/') >= 0:
		return fmt.Errorf("invalid name %q: contains '/'", name)
	case strings.IndexByte(name, 0) >= 0:
		return fmt.Errorf("invalid name %q: contains NUL", name)
	}
	return nil
}

// ValidPath reports whether p is a slash-separated relative path whose
// every element is a ValidName (so none is empty, "." or ".."): the error
// is the first bad element's.
func ValidPath(p string) error {
	for elem := range strings.SplitSeq(p, "/") {
		if err := ValidName(elem); err != nil {
			return err
		}
	}
	return nil
}
