package remotesync

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/sync/errgroup"

	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/objects"
)

// defaultObjectSize is the size a data object grows to before the next
// one starts: large enough that requests stay few, small enough that a
// push cut short loses little and memory stays bounded (uploads × size).
const defaultObjectSize = 16 << 20

// uploads bounds the data objects in flight at once.
const uploads = 4

// pushCheckpoints uploads the data and then the segment of checkpoints ids
// (in seq order) and records both; it returns the segment's name.
func (s *Syncer) pushCheckpoints(ctx context.Context, ids []objects.ID, lt localTask) (string, error) {
	s.progress("scan", 0, int64(len(ids)))
	isNew := make(map[objects.ID]bool, len(ids))
	for _, id := range ids {
		isNew[id] = true
	}
	cps := make([]index.Checkpoint, len(ids))
	w := newTreeWalk(s.DB)
	for i, id := range ids {
		cp, err := s.DB.Checkpoint(id)
		if err != nil {
			return "", err
		}
		cps[i] = cp
		// The trees of a checkpoint already pushed are on the remote with
		// their blobs' locators: the new segment need not repeat them.
		if !cp.Parent.IsZero() && !isNew[cp.Parent] {
			parent, err := s.DB.Checkpoint(cp.Parent)
			if errors.Is(err, index.ErrNotFound) {
				continue // dropped here by gc: the segment repeats what it shared
			}
			if err != nil {
				return "", err
			}
			if _, _, err := w.walk(parent.Root); err != nil {
				return "", err
			}
		}
	}
	var trees [][]byte
	var blobs []objects.ID
	cpEnc := make([][]byte, len(cps))
	for i, cp := range cps {
		t, b, err := w.walk(cp.Root)
		if err != nil {
			return "", err
		}
		trees, blobs = append(trees, t...), append(blobs, b...)
		if !cp.State.IsZero() && !w.blobs[cp.State] {
			w.blobs[cp.State] = true
			blobs = append(blobs, cp.State)
		}
		cpEnc[i] = index.EncodeCheckpoint(cp)
	}
	locs, err := s.placeBlobs(ctx, blobs)
	if err != nil {
		return "", err
	}
	stored, err := encodeSegment(trees, cpEnc, locs)
	if err != nil {
		return "", err
	}
	name := s.sum(stored)
	s.progress("segment", 0, 1)
	if up, err := s.putImmutable(ctx, metaKey(name), stored); err != nil {
		return "", err
	} else if up {
		atomic.AddInt64(&s.counters.SegmentsUp, 1)
	}
	b := s.DB.NewBatch()
	defer b.Close()
	for _, id := range ids {
		b.SetConfig(s.cpKey(id), name.String())
	}
	b.SetConfig(s.segKey(name.String()), "")
	return name.String(), b.Commit()
}

// treeWalk visits trees once, remembering every tree and blob it saw.
type treeWalk struct {
	db    *index.DB
	trees map[objects.ID]bool
	blobs map[objects.ID]bool
}

func newTreeWalk(db *index.DB) *treeWalk {
	return &treeWalk{db: db, trees: map[objects.ID]bool{}, blobs: map[objects.ID]bool{}}
}

// walk visits the trees under root not seen before and returns their
// encodings and the blobs they reference that were not seen before.
func (w *treeWalk) walk(root objects.ID) (trees [][]byte, blobs []objects.ID, err error) {
	stack := []objects.ID{root}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if w.trees[id] {
			continue
		}
		w.trees[id] = true
		t, err := w.db.Tree(id)
		if err != nil {
			return nil, nil, fmt.Errorf("tree %s: %w", id.Short(), err)
		}
		enc, err := index.EncodeTree(t)
		if err != nil {
			return nil, nil, err
		}
		trees = append(trees, enc)
		for _, e := range t.Entries {
			switch {
			case e.Kind == objects.KindDir:
				stack = append(stack, e.ID)
			case !w.blobs[e.ID]:
				w.blobs[e.ID] = true
				blobs = append(blobs, e.ID)
			}
		}
	}
	return trees, blobs, nil
}

// pending is a blob to upload: its id and where it is stored locally.
type pending struct {
	id  objects.ID
	loc objects.Locator
}

// placeBlobs returns a remote locator for every blob of ids (and every
// chunk of a chunked one), uploading those the remote lacks. A blob the
// record places on the remote counts only if its data object is there.
func (s *Syncer) placeBlobs(ctx context.Context, ids []objects.ID) ([]blobLoc, error) {
	recorded := map[objects.ID]Loc{}
	local := map[objects.ID]objects.Locator{}
	seen := map[objects.ID]bool{}
	for len(ids) > 0 {
		id := ids[len(ids)-1]
		ids = ids[:len(ids)-1]
		if seen[id] {
			continue
		}
		seen[id] = true
		rl, onRemote, err := s.recordedLoc(id)
		if err != nil {
			return nil, err
		}
		ll, found, err := s.DB.Locator(id)
		if err != nil {
			return nil, err
		}
		if found {
			local[id] = ll
			if ll.Chunked() {
				chunks, err := s.Blobs.ChunkList(id)
				if err != nil {
					return nil, err
				}
				ids = append(ids, chunks...)
			}
		}
		switch {
		case onRemote:
			recorded[id] = rl
		case !found:
			return nil, fmt.Errorf("blob %s: %w", id.Short(), objects.ErrNotFound)
		}
	}
	missing, err := s.missingObjects(ctx, recorded)
	if err != nil {
		return nil, err
	}
	var locs []blobLoc
	var todo []pending
	for id := range seen {
		if rl, ok := recorded[id]; ok && !missing[rl.Object] {
			locs = append(locs, blobLoc{ID: id, Loc: rl})
			continue
		}
		ll, ok := local[id]
		if !ok {
			return nil, fmt.Errorf("blob %s: its data object left the remote and the store has no copy: %w",
				id.Short(), objects.ErrNotFound)
		}
		todo = append(todo, pending{id: id, loc: ll})
	}
	up, err := s.upload(ctx, todo)
	locs = append(locs, up...)
	slices.SortFunc(locs, func(a, b blobLoc) int { return cmp.Compare(a.ID.String(), b.ID.String()) })
	return locs, err
}

// missingObjects asks the remote for each data object the record names and
// returns those it no longer has.
func (s *Syncer) missingObjects(ctx context.Context, recorded map[objects.ID]Loc) (map[objects.ID]bool, error) {
	objs := map[objects.ID]bool{}
	for _, l := range recorded {
		objs[l.Object] = true
	}
	missing := map[objects.ID]bool{}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for o := range objs {
		g.Go(func() error {
			there, err := s.exists(gctx, dataKey(o))
			if err == nil && !there {
				mu.Lock()
				missing[o] = true
				mu.Unlock()
			}
			return err
		})
	}
	err := g.Wait()
	return missing, err
}

// record is one stored record to upload and the blobs it holds (several
// for a group record).
type record struct {
	pack   uint32
	offset int64
	length uint32
	blobs  []pending
	// whole, when set, is the record to upload instead of the stored one:
	// a delta's content as a record of its own (objects.Store.WholeRecord),
	// so that the remote holds no delta, whose base it may lack.
	whole []byte
}

// upload copies the records of blobs into data objects, uploads them and
// records where each blob went.
func (s *Syncer) upload(ctx context.Context, blobs []pending) ([]blobLoc, error) {
	byRec := map[[2]int64]*record{}
	var recs []*record
	var total int64
	for _, p := range blobs {
		if p.loc.Delta() {
			rec, whole, err := s.Blobs.WholeRecord(p.id, p.loc)
			if err != nil {
				return nil, err
			}
			recs = append(recs, &record{pack: p.loc.Pack, offset: p.loc.Offset, length: whole.Length,
				blobs: []pending{{id: p.id, loc: whole}}, whole: rec})
			total += int64(whole.Length)
			continue
		}
		k := [2]int64{int64(p.loc.Pack), p.loc.Offset}
		r := byRec[k]
		if r == nil {
			r = &record{pack: p.loc.Pack, offset: p.loc.Offset, length: p.loc.Length}
			byRec[k] = r
			recs = append(recs, r)
			total += int64(p.loc.Length)
		}
		r.blobs = append(r.blobs, p)
	}
	slices.SortFunc(recs, func(a, b *record) int {
		return cmp.Or(cmp.Compare(a.pack, b.pack), cmp.Compare(a.offset, b.offset))
	})
	var mu sync.Mutex
	var locs []blobLoc
	var done int64
	target := s.ObjectSize
	if target <= 0 {
		target = defaultObjectSize
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(uploads)
	for len(recs) > 0 {
		n, size := 0, int64(0)
		for n < len(recs) && (n == 0 || size+int64(recs[n].length) <= target) {
			size += int64(recs[n].length)
			n++
		}
		part := recs[:n]
		recs = recs[n:]
		g.Go(func() error {
			got, err := s.uploadObject(gctx, part, size)
			if err != nil {
				return err
			}
			mu.Lock()
			locs = append(locs, got...)
			done += size
			s.progress("upload", done, total)
			mu.Unlock()
			return nil
		})
	}
	return locs, g.Wait()
}

// uploadObject reads recs from their packs into one data object, uploads
// it and records its blobs' remote locators.
func (s *Syncer) uploadObject(ctx context.Context, recs []*record, size int64) ([]blobLoc, error) {
	buf := make([]byte, 0, size)
	files := map[uint32]vfs.File{}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	offsets := make([]int64, len(recs))
	for i, r := range recs {
		offsets[i] = int64(len(buf))
		if r.whole != nil {
			buf = append(buf, r.whole...)
			continue
		}
		f := files[r.pack]
		if f == nil {
			var err error
			if f, err = s.Blobs.FS().Open(s.Blobs.PackPath(r.pack)); err != nil {
				return nil, fmt.Errorf("read pack: %w", err)
			}
			files[r.pack] = f
		}
		buf = buf[:len(buf)+int(r.length)]
		if _, err := f.ReadAt(buf[offsets[i]:], r.offset); err != nil {
			return nil, fmt.Errorf("read pack %s at %d: %w", s.Blobs.PackPath(r.pack), r.offset, err)
		}
	}
	name := s.sum(buf)
	up, err := s.putImmutable(ctx, dataKey(name), buf)
	if err != nil {
		return nil, err
	}
	if up {
		atomic.AddInt64(&s.counters.ObjectsUp, 1)
	}
	var locs []blobLoc
	b := s.DB.NewBatch()
	defer b.Close()
	for i, r := range recs {
		for _, p := range r.blobs {
			l := Loc{Object: name, Offset: offsets[i], Length: r.length, Flags: p.loc.Flags, Size: p.loc.Size, Member: p.loc.Member}
			locs = append(locs, blobLoc{ID: p.id, Loc: l})
			b.SetConfig(s.blobKey(p.id), string(appendLoc(nil, l)))
		}
	}
	return locs, b.Commit()
}
