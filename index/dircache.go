package index

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/ckpt/ckpt/objects"
)

// CachedFile is the stat cache entry of one name in a directory: the stat
// fields a save compares, and the blob id they vouch for.
type CachedFile struct {
	Name             string
	Size             int64
	MtimeNs, CtimeNs int64
	Inode            uint64
	Mode             uint32 // st_mode as the walker reports it, type bits included
	ID               objects.ID
}

// DirCache is the stat cache of one workspace directory: the tree id the
// directory had when the cache was written, the moment it was written (for
// the racy-entry test), and its entries sorted by Name.
type DirCache struct {
	Tree      objects.ID
	WrittenNs int64
	Entries   []CachedFile
}

// minCachedFileSize is the smallest encoding of one CachedFile.
const minCachedFileSize = 2 + 3 + 2*8 + objects.IDSize

func validDirCache(dc *DirCache) error {
	for i := range dc.Entries {
		e := &dc.Entries[i]
		if err := objects.ValidName(e.Name); err != nil {
			return fmt.Errorf("entry %d: %w", i, err)
		}
		if i > 0 && e.Name <= dc.Entries[i-1].Name {
			return fmt.Errorf("entry %d: %q not after %q", i, e.Name, dc.Entries[i-1].Name)
		}
		if e.Size < 0 {
			return fmt.Errorf("entry %d (%q): negative size %d", i, e.Name, e.Size)
		}
	}
	return nil
}

// appendDirCache appends the encoding of dc (doc.go) to b.
func appendDirCache(b []byte, dc *DirCache) []byte {
	size := 1 + objects.IDSize + 8 + binary.MaxVarintLen64
	for i := range dc.Entries {
		size += len(dc.Entries[i].Name) + 4*binary.MaxVarintLen64 + 2*8 + objects.IDSize
	}
	b = slices.Grow(b, size)
	b = append(b, encodingVersion)
	b = append(b, dc.Tree[:]...)
	b = binary.LittleEndian.AppendUint64(b, uint64(dc.WrittenNs))
	b = binary.AppendUvarint(b, uint64(len(dc.Entries)))
	for i := range dc.Entries {
		e := &dc.Entries[i]
		b = appendString(b, e.Name)
		b = binary.AppendUvarint(b, uint64(e.Size))
		b = binary.LittleEndian.AppendUint64(b, uint64(e.MtimeNs))
		b = binary.LittleEndian.AppendUint64(b, uint64(e.CtimeNs))
		b = binary.AppendUvarint(b, e.Inode)
		b = binary.AppendUvarint(b, uint64(e.Mode))
		b = append(b, e.ID[:]...)
	}
	return b
}

// decodeDirCache parses a dir cache encoding. It makes two allocations
// whatever the entry count: the Entries slice, and one string holding the
// whole value that every Name is a substring of. Malformed input (including
// invalid, unsorted or duplicate names) yields an error marked with objects.ErrCorrupt.
func decodeDirCache(b []byte) (DirCache, error) {
	s := string(b)
	r := reader{b: b}
	var dc DirCache
	r.version()
	dc.Tree = r.id()
	dc.WrittenNs = r.fixed64()
	n := r.count(minCachedFileSize)
	if r.err != nil {
		return DirCache{}, r.err
	}
	if n > 0 {
		dc.Entries = make([]CachedFile, n)
	}
	for i := range dc.Entries {
		e := &dc.Entries[i]
		nameLen := r.uvarint()
		start := r.off
		r.bytes(nameLen)
		e.Size = r.int()
		e.MtimeNs = r.fixed64()
		e.CtimeNs = r.fixed64()
		e.Inode = r.uvarint()
		mode := r.uvarint()
		e.ID = r.id()
		if r.err != nil {
			return DirCache{}, r.err
		}
		if mode > 1<<32-1 {
			return DirCache{}, objects.MarkCorrupt(fmt.Errorf("dircache entry %d: mode %#o overflows uint32", i, mode))
		}
		e.Mode = uint32(mode)
		e.Name = s[start : start+int(nameLen)]
	}
	if err := r.end(); err != nil {
		return DirCache{}, err
	}
	if err := validDirCache(&dc); err != nil {
		return DirCache{}, objects.MarkCorrupt(fmt.Errorf("dircache %w", err))
	}
	return dc, nil
}

// DirCache returns the stat cache of workspace directory dir (a
// slash-separated path relative to the workspace root, "" for the root);
// false if there is none. A stored value that does not decode yields an
// error marked with objects.ErrCorrupt that names the key. A stat cache
// this DB read or committed recently is answered from memory.
func (db *DB) DirCache(dir string) (DirCache, bool, error) {
	v, found, err := db.rawDirCache(dir)
	if !found || err != nil {
		return DirCache{}, false, err
	}
	dc, err := decodeDirCache(v)
	if err != nil {
		return DirCache{}, false, fmt.Errorf("key %s: %w", describeKey(stringKey(prefixDirCache, dir)), err)
	}
	return dc, true, nil
}

// HasDirCache reports whether directory dir has a stored stat cache,
// without decoding it.
func (db *DB) HasDirCache(dir string) (bool, error) {
	_, found, err := db.rawDirCache(dir)
	return found, err
}

// rawDirCache returns dir's stored stat cache (shared with the memo: not
// to be modified).
func (db *DB) rawDirCache(dir string) ([]byte, bool, error) {
	return db.dirCaches.read(dir, func() ([]byte, bool, error) {
		return get(db, stringKey(prefixDirCache, dir), copyValue)
	})
}

// DirCacheSet is every stored dir cache, read with one iterator and kept in
// encoded form (a few dozen bytes per file) until a directory asks for its
// own: a save prefetches the stat cache this way instead of one index lookup
// per directory. It is a read-only snapshot, safe for concurrent use.
type DirCacheSet struct {
	raw map[string][]byte
}

// LoadDirCaches reads every stored dir cache into a DirCacheSet.
func (db *DB) LoadDirCaches() (*DirCacheSet, error) {
	set := &DirCacheSet{raw: map[string][]byte{}}
	err := db.scan([]byte{prefixDirCache}, func(k, v []byte) error {
		set.raw[string(k[1:])] = append([]byte(nil), v...)
		return nil
	})
	return set, err
}

// Has reports whether the set holds a cache of dir, without decoding it;
// it never fails (the error is DB.HasDirCache's).
func (s *DirCacheSet) Has(dir string) (bool, error) {
	_, ok := s.raw[dir]
	return ok, nil
}

// Get decodes the cache of dir; false if there is none. A value that does
// not decode yields an error marked with objects.ErrCorrupt that names the directory.
func (s *DirCacheSet) Get(dir string) (DirCache, bool, error) {
	v, ok := s.raw[dir]
	if !ok {
		return DirCache{}, false, nil
	}
	dc, err := decodeDirCache(v)
	if err != nil {
		return DirCache{}, false, fmt.Errorf("key %s: %w", describeKey(stringKey(prefixDirCache, dir)), err)
	}
	return dc, true, nil
}

// AllDirCaches calls fn for every stored dir cache, in directory key order
// (bytewise: "" first, then "a", "a.txt", "a/b": not a depth-first walk),
// with one iterator: a save prefetches the whole stat cache this way instead
// of one lookup per directory. fn owns dc. A value that does not decode stops
// the iteration with an error marked with objects.ErrCorrupt that names the key; an
// error from fn stops it and is returned.
func (db *DB) AllDirCaches(fn func(dir string, dc DirCache) error) error {
	return db.scan([]byte{prefixDirCache}, func(k, v []byte) error {
		dc, err := decodeDirCache(v)
		if err != nil {
			return fmt.Errorf("key %s: %w", describeKey(k), err)
		}
		return fn(string(k[1:]), dc)
	})
}
