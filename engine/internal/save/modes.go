package save

import (
	"github.com/ckpt/ckpt/objects"
	"github.com/ckpt/ckpt/walker"
)

// modeCarry gives a scan of a file system without permission bits
// (Windows: the walker synthesises 0644, 0755 for directories, and clears
// the write bits of read-only files) the modes of the base checkpoint's
// entries, so a checkpoint's modes survive a save there.
type modeCarry struct{ trees *baseTrees }

// entries returns the base checkpoint's entries of directory dir, by name
// (nil when the base has no such directory, or c is nil).
func (c *modeCarry) entries(dir string) (map[string]objects.Entry, error) {
	if c == nil {
		return nil, nil
	}
	return c.trees.entries(dir)
}

// mode is the mode to record for ent (content id) in a directory whose base
// entries are based: the walker's with a nil c, else carriedMode's.
func (c *modeCarry) mode(based map[string]objects.Entry, ent *walker.Entry, id objects.ID) uint32 {
	if c == nil {
		return ent.Mode
	}
	var prev *objects.Entry
	if e, ok := based[ent.Name]; ok {
		prev = &e
	}
	return carriedMode(ent.Kind, ent.Mode, id, prev)
}

// sameModes reports whether a directory whose entries all match the stat
// cache (reuse) may reuse its stored tree: with carried modes, only when
// the stored tree's modes (carried from the base of its own scan) are the
// ones carried now.
func (c *modeCarry) sameModes(reuse bool, stored objects.ID, now objects.Tree) (bool, error) {
	if c == nil || !reuse {
		return reuse, nil
	}
	t, err := c.trees.db.Tree(stored)
	if err != nil || len(t.Entries) != len(now.Entries) {
		return false, err
	}
	for i, e := range t.Entries {
		if e.Name != now.Entries[i].Name || e.Mode != now.Entries[i].Mode {
			return false, nil
		}
	}
	return true, nil
}

// carriedMode is the mode a save records for an entry of kind k and
// content id whose synthesised mode is fs, given the base checkpoint's
// entry of the same name (nil: none): an unchanged file or a directory
// keeps the base's bits; a changed file gets 0755 or 0644 as the base's
// file was executable or not; the read-only attribute (no write bit in fs)
// clears the write bits, and its absence restores the owner's. Symlinks and
// new entries keep fs.
func carriedMode(k walker.Kind, fs uint32, id objects.ID, prev *objects.Entry) uint32 {
	if prev == nil || prev.Kind != objects.Kind(k) || k == walker.KindSymlink {
		return fs
	}
	if k == walker.KindDir {
		return prev.Mode
	}
	m := prev.Mode
	if prev.ID != id {
		m = 0o644
		if prev.Mode&0o111 != 0 {
			m = 0o755
		}
	}
	switch {
	case fs&0o200 == 0:
		m &^= 0o222
	case m&0o200 == 0:
		m |= 0o200
	}
	return m
}
