package index

import "github.com/ckpt/ckpt/objects"

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
