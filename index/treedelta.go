package index

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/ckpt/ckpt/objects"
)

// Tree delta records (doc.go, "Tree deltas"): a directory's new tree,
// which differs from its previous one in an entry or two, is stored as the
// previous tree's id and the entries removed, changed or added, instead of
// all its entries again. A tree id stays objects.Sum of the canonical full
// encoding, so nothing outside the index sees the difference.

// treeDeltaTag is the first byte of a delta record; a full tree value
// starts with encodingVersion.
const treeDeltaTag = 2

// MaxTreeDeltaDepth bounds a chain of tree delta records: reading a tree
// reads at most MaxTreeDeltaDepth+1 stored values.
const MaxTreeDeltaDepth = 16

// rebaseDepth is where a directory's history goes on once its previous
// tree ends a full chain: its new tree is stored against the tree at this
// depth (or the first below it) on that chain, with the entries changed
// since, instead of whole. A directory changed at every step (the root,
// one holding the files being worked on) then stores a whole tree only
// when its changes since that tree come to half of it, not once every
// MaxTreeDeltaDepth+1 versions.
const rebaseDepth = MaxTreeDeltaDepth / 2

// minNameSize is the smallest encoding of a removed name: a one-byte
// length and a one-byte name.
const minNameSize = 2

// treeDelta is a decoded delta record: base's entries without removed,
// with upserts added or replacing the base's entries of the same name.
type treeDelta struct {
	depth   uint64 // 1 + at least the depth of base's record (0 for a full value)
	base    objects.ID
	removed []string        // strictly increasing
	upserts []objects.Entry // strictly increasing by name
}

// diffTree returns the delta from base to t: the names of base's entries t
// lacks and t's entries base lacks or holds otherwise.
func diffTree(base, t objects.Tree) (removed []string, upserts []objects.Entry) {
	for was, is := range objects.Pairs(base.Entries, t.Entries) {
		switch {
		case is == nil:
			removed = append(removed, was.Name)
		case was == nil || *was != *is:
			upserts = append(upserts, *is)
		}
	}
	return removed, upserts
}

// appendTreeDelta appends the encoding of d (format in doc.go).
func appendTreeDelta(b []byte, d *treeDelta) ([]byte, error) {
	b = append(b, treeDeltaTag)
	b = binary.AppendUvarint(b, d.depth)
	b = append(b, d.base[:]...)
	b = binary.AppendUvarint(b, uint64(len(d.removed)))
	for _, name := range d.removed {
		b = appendString(b, name)
	}
	b = binary.AppendUvarint(b, uint64(len(d.upserts)))
	return appendEntries(b, d.upserts)
}

// decodeTreeDelta parses a delta record. It never panics; anything
// malformed (a depth of 0 or above MaxTreeDeltaDepth, invalid or unsorted
// names, invalid entries, trailing bytes) is an error marked with
// objects.ErrCorrupt.
func decodeTreeDelta(b []byte) (treeDelta, error) {
	r := reader{b: b}
	if tag := r.byte(); r.err == nil && tag != treeDeltaTag {
		r.fail("not a tree delta (first byte %d)", tag)
	}
	d := treeDelta{depth: r.uvarint()}
	if r.err == nil && (d.depth == 0 || d.depth > MaxTreeDeltaDepth) {
		r.fail("tree delta depth %d outside 1..%d", d.depth, MaxTreeDeltaDepth)
	}
	d.base = r.id()
	s := string(b)
	n := r.count(minNameSize)
	if r.err != nil {
		return treeDelta{}, r.err
	}
	d.removed = make([]string, n)
	for i := range d.removed {
		nameLen := r.uvarint()
		start := r.off
		r.bytes(nameLen)
		if r.err != nil {
			return treeDelta{}, r.err
		}
		d.removed[i] = s[start : start+int(nameLen)]
		if err := objects.ValidName(d.removed[i]); err != nil {
			return treeDelta{}, objects.MarkCorrupt(fmt.Errorf("tree delta: removed %d: %w", i, err))
		}
		if i > 0 && d.removed[i] <= d.removed[i-1] {
			return treeDelta{}, objects.MarkCorrupt(fmt.Errorf("tree delta: removed %q not after %q", d.removed[i], d.removed[i-1]))
		}
	}
	d.upserts = make([]objects.Entry, r.count(minEntrySize))
	if err := r.entries(s, d.upserts); err != nil {
		return treeDelta{}, err
	}
	if err := r.end(); err != nil {
		return treeDelta{}, err
	}
	return d, nil
}

// apply returns base with d's changes. A removed name base lacks, or a
// name both removed and upserted, is damage (objects.ErrCorrupt).
func (d *treeDelta) apply(base objects.Tree) (objects.Tree, error) {
	out := make([]objects.Entry, 0, max(0, len(base.Entries)+len(d.upserts)-len(d.removed)))
	rm, up := d.removed, d.upserts
	for _, e := range base.Entries {
		for len(up) > 0 && up[0].Name < e.Name {
			out = append(out, up[0])
			up = up[1:]
		}
		switch {
		case len(rm) > 0 && rm[0] == e.Name:
			if len(up) > 0 && up[0].Name == e.Name {
				return objects.Tree{}, objects.MarkCorrupt(fmt.Errorf("tree delta: %q both removed and changed", e.Name))
			}
			rm = rm[1:]
		case len(up) > 0 && up[0].Name == e.Name:
			out = append(out, up[0])
			up = up[1:]
		default:
			out = append(out, e)
		}
	}
	if len(rm) > 0 {
		return objects.Tree{}, objects.MarkCorrupt(fmt.Errorf("tree delta: removes %q, which its base lacks", rm[0]))
	}
	return objects.Tree{Entries: append(out, up...)}, nil
}

// isTreeDelta reports whether a stored tree value is a delta record.
func isTreeDelta(v []byte) bool { return len(v) > 0 && v[0] == treeDeltaTag }

// treeDeltaHeader returns the depth and the base id a delta record names,
// reading its header only.
func treeDeltaHeader(v []byte) (depth uint64, base objects.ID, err error) {
	r := reader{b: v, off: 1}
	depth = r.uvarint()
	base = r.id()
	return depth, base, r.err
}

// rawTree returns a copy of tree id's stored value, with found false when
// there is none.
func (db *DB) rawTree(id objects.ID) (v []byte, found bool, err error) {
	return get(db, idKey(prefixTree, id), copyValue)
}

// hasTree reports whether tree id has a stored value, without copying it.
func (db *DB) hasTree(id objects.ID) (bool, error) {
	if _, ok := db.trees.get(id); ok {
		return true, nil // the memo follows the index: it holds no tree the index lacks
	}
	_, found, err := get(db, idKey(prefixTree, id), func([]byte) (struct{}, error) { return struct{}{}, nil })
	return found, err
}

// sharedTree is Tree without the copy: the entries are shared with the
// memo and must not be modified.
func (db *DB) sharedTree(id objects.ID) (entries []objects.Entry, depth uint64, found bool, err error) {
	t, found, err := db.trees.read(id, func() (cachedTree, bool, error) {
		t, depth, found, err := db.resolveTree(id, true)
		return cachedTree{entries: t.Entries, depth: depth}, found, err
	})
	return t.entries, t.depth, found, err
}

// resolveTree reads tree id, applying delta records down their chain to a
// full value, and returns it with the depth of id's record (0 for a full
// value). With cached set, the chain stops at the first base the memo
// holds. Each record on the chain must have a smaller depth than the one
// naming it as base, so a damaged chain cannot loop. The result must hash
// to id. found is false when id has no stored value; any damage (a missing
// base, a record that does not decode, a result of another hash) is an
// error marked with objects.ErrCorrupt naming id.
func (db *DB) resolveTree(id objects.ID, cached bool) (t objects.Tree, depth uint64, found bool, err error) {
	var chain []treeDelta
	cur := id
	for {
		if cached && cur != id {
			if base, ok := db.trees.get(cur); ok {
				t = objects.Tree{Entries: base.entries} // apply copies what it keeps
				break
			}
		}
		v, ok, err := db.rawTree(cur)
		switch {
		case err != nil:
			return objects.Tree{}, 0, false, err
		case !ok && cur == id:
			return objects.Tree{}, 0, false, nil
		case !ok:
			return objects.Tree{}, 0, false, treeDamage(id, fmt.Errorf("delta base %s missing", cur))
		}
		if !isTreeDelta(v) {
			if t, err = DecodeTree(v); err != nil {
				return objects.Tree{}, 0, false, treeDamage(id, err)
			}
			break
		}
		d, err := decodeTreeDelta(v)
		if err != nil {
			return objects.Tree{}, 0, false, treeDamage(id, fmt.Errorf("record %s: %w", cur, err))
		}
		if len(chain) > 0 && d.depth >= chain[len(chain)-1].depth {
			return objects.Tree{}, 0, false, treeDamage(id, fmt.Errorf("delta %s: depth %d not below %d", cur, d.depth, chain[len(chain)-1].depth))
		}
		chain = append(chain, d)
		cur = d.base
	}
	for i := len(chain) - 1; i >= 0; i-- {
		if t, err = chain[i].apply(t); err != nil {
			return objects.Tree{}, 0, false, treeDamage(id, err)
		}
	}
	enc, err := EncodeTree(t)
	if err == nil {
		err = checkSum(id, enc)
	}
	if err != nil {
		return objects.Tree{}, 0, false, treeDamage(id, objects.MarkCorrupt(err))
	}
	if len(chain) > 0 {
		depth = chain[0].depth
	}
	return t, depth, true, nil
}

// treeDamage names tree id in err, marking it with objects.ErrCorrupt.
func treeDamage(id objects.ID, err error) error {
	if !errors.Is(err, objects.ErrCorrupt) {
		err = objects.MarkCorrupt(err)
	}
	return fmt.Errorf("key %s: %w", describeKey(idKey(prefixTree, id)), err)
}

// treeDeltaFor returns the delta record storing t (encoded as full)
// against the stored tree base, or against the tree at rebaseDepth on
// base's chain when base ends a full chain, and its depth; or nil when
// there is to be none: the base is missing or damaged (left for verify to
// report), or the delta is not at most half of full.
func (db *DB) treeDeltaFor(t objects.Tree, full []byte, base objects.ID) ([]byte, uint64, error) {
	entries, depth, found, err := db.sharedTree(base)
	if err == nil && found && depth >= MaxTreeDeltaDepth {
		if base, err = db.chainAncestor(base, rebaseDepth); err == nil {
			entries, depth, found, err = db.sharedTree(base)
		}
	}
	switch {
	case errors.Is(err, objects.ErrCorrupt) || !found || depth >= MaxTreeDeltaDepth:
		return nil, 0, nil
	case err != nil:
		return nil, 0, err
	}
	return treeDeltaOf(t, full, base, entries, depth)
}

// treeDeltaOf returns the delta record storing t (encoded as full) against
// base, whose entries are entries and whose record has depth depth, and
// the delta's depth; or nil when the delta is not at most half of full.
func treeDeltaOf(t objects.Tree, full []byte, base objects.ID, entries []objects.Entry, depth uint64) ([]byte, uint64, error) {
	removed, upserts := diffTree(objects.Tree{Entries: entries}, t)
	rec, err := appendTreeDelta(make([]byte, 0, len(full)/2), &treeDelta{depth: depth + 1, base: base, removed: removed, upserts: upserts})
	if err != nil || 2*len(rec) > len(full) {
		return nil, 0, err
	}
	return rec, depth + 1, nil
}

// chainAncestor returns the first tree on id's delta chain (id, its base,
// that tree's base, and so on) whose stored record has a depth of at most
// maxDepth. It reads the records' headers only; a chain that is missing a
// record or does not go down in depth is an error marked with
// objects.ErrCorrupt.
func (db *DB) chainAncestor(id objects.ID, maxDepth uint64) (objects.ID, error) {
	above := uint64(MaxTreeDeltaDepth + 1)
	for {
		v, found, err := db.rawTree(id)
		switch {
		case err != nil:
			return objects.ID{}, err
		case !found:
			return objects.ID{}, treeDamage(id, errors.New("delta base missing"))
		case !isTreeDelta(v):
			return id, nil
		}
		depth, base, err := treeDeltaHeader(v)
		switch {
		case err != nil:
			return objects.ID{}, treeDamage(id, err)
		case depth >= above:
			return objects.ID{}, treeDamage(id, fmt.Errorf("delta depth %d not below %d", depth, above))
		case depth <= maxDepth:
			return id, nil
		}
		id, above = base, depth
	}
}
