package objects

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/ckpt/ckpt/objects/internal/pack"
)

// Deferred compression (objects/internal/pack, "Deferred packs"): a first save stores its
// blobs uncompressed, which leaves it bound by reading and hashing rather
// than by zstd, and marks the packs it wrote; a later collection rewrites
// them compressed at Options.RecompressLevel, as git keeps a first add as
// loose objects until gc packs them.

// deferredExt names the marker of a deferred pack: NNNNNNNN.raw beside
// NNNNNNNN.pack.
const deferredExt = ".raw"

// DeferCompression makes the Batch store every record uncompressed and mark
// each pack it writes as deferred (Store.DeferredPacks) before Sync
// returns, so that its placements are never committed without the mark.
// Call it before the first Put.
func (b *Batch) DeferCompression() { b.deferred = true }

// codec returns what the Batch compresses with: nil (store as is) when
// compression is deferred.
func (b *Batch) codec() *codec {
	if b.deferred {
		return nil
	}
	return b.s.codec
}

func (s *Store) deferredPath(n uint32) string {
	return filepath.Join(s.dir, fmt.Sprintf("%08x%s", n, deferredExt))
}

// markDeferred creates the markers of packs ns (existing ones are kept).
// The caller fsyncs the packs directory.
func (s *Store) markDeferred(ns []uint32) error {
	for _, n := range slices.Compact(slices.Sorted(slices.Values(ns))) {
		if _, err := s.opts.FS.Stat(s.deferredPath(n)); err == nil {
			continue
		}
		f, err := s.opts.FS.Create(s.deferredPath(n), vfs.WriteCategoryUnspecified)
		if err != nil {
			return fmt.Errorf("mark pack %s deferred: %w", s.PackPath(n), err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("mark pack %s deferred: %w", s.PackPath(n), err)
		}
	}
	return nil
}

// DeferredPacks returns the packs marked deferred that exist: packs a
// Batch with DeferCompression wrote, whose records a collection should
// rewrite compressed. RemovePack removes a pack's mark with it.
func (s *Store) DeferredPacks() ([]uint32, error) {
	names, err := s.opts.FS.List(s.dir)
	if err != nil {
		return nil, fmt.Errorf("list packs: %w", err)
	}
	var out []uint32
	for _, name := range names {
		n, ok := packNumber(name, deferredExt)
		if !ok {
			continue
		}
		if _, err := s.opts.FS.Stat(s.PackPath(n)); err == nil {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// removeDeferredMark removes pack n's mark, if any.
func (s *Store) removeDeferredMark(n uint32) error {
	if err := s.opts.FS.Remove(s.deferredPath(n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove mark of pack %s: %w", s.PackPath(n), err)
	}
	return nil
}

// Recompress reads plain blob id at loc, verified, and appends it as a new
// record compressed at Options.RecompressLevel (or raw when that does not
// pay), returning its locator. It is Copy for blobs too large to regroup
// whose record should shrink: those of a deferred pack. A chunk list or
// group member is refused; damage is a *CorruptError and writes nothing.
func (r *rewriter) Recompress(id ID, loc Locator) (Locator, error) {
	if r.err != nil {
		return Locator{}, r.err
	}
	if loc.Flags&(pack.FlagChunked|pack.FlagGroup) != 0 {
		return Locator{}, fmt.Errorf("recompress %s: not a plain record", id.Short())
	}
	_, content, err := r.s.readRecord(loc, id)
	if err != nil {
		return Locator{}, err
	}
	scratch := getScratch(&r.s.packBufs)
	defer r.s.packBufs.Put(scratch)
	payload, flags, err := r.codec.compress(*scratch, content, true)
	if err != nil {
		r.err = err
		return Locator{}, err
	}
	if flags&pack.FlagCompressed != 0 {
		*scratch = payload[:0]
	}
	h := recordHeader{flags: flags, id: id, size: loc.Size, payloadLen: uint32(len(payload))}
	off, n, err := r.append(h, payload)
	if err != nil {
		return Locator{}, err
	}
	return Locator{Pack: n, Offset: off, Length: uint32(h.recordLen()), Flags: flags, Size: loc.Size}, nil
}
