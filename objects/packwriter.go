package objects

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/ckpt/ckpt/internal/storefs"
	"github.com/ckpt/ckpt/objects/internal/pack"
)

// packWriterBuffer is the write buffer of one pack writer: records go to
// the file in large sequential writes.
const packWriterBuffer = 1 << 20

// writebackStep is how much a pack writer lets reach the file before it
// starts the device writing it (storefs.StartWriteback): a first save of
// hundreds of MiB then writes while it reads and hashes, and its closing
// sync waits for the last few MiB rather than all of them.
const writebackStep = 8 << 20

// packWriter appends records to one pack file. It is used by one goroutine
// at a time (the Batch hands it out exclusively).
type packWriter struct {
	n        uint32
	path     string
	f        vfs.File
	bw       *bufio.Writer
	size     int64 // logical end of the pack, buffered bytes included
	written  int64 // where the device was last asked to start writing from
	unsynced bool  // bytes were appended since the last sync
	// kept is the end below which the writer never cuts the pack: its end
	// when the writer opened it, then its end at each sync. Nothing above
	// it is referenced: locators are handed out for synced records only.
	kept int64
	// writeback starts the device writing a range of the file (Store.writeback).
	writeback func(f vfs.File, off, n int64)
	err       error // sticky write failure
	hdr       []byte
}

// append writes one record and returns its offset.
func (w *packWriter) append(h recordHeader, payload []byte) (int64, error) {
	if w.err != nil {
		return 0, w.err
	}
	off := w.size
	w.hdr = appendRecordHeader(w.hdr[:0], h)
	if _, err := w.bw.Write(w.hdr); err != nil {
		w.err = fmt.Errorf("write pack %s: %w", w.path, err)
		return 0, w.err
	}
	if _, err := w.bw.Write(payload); err != nil {
		w.err = fmt.Errorf("write pack %s: %w", w.path, err)
		return 0, w.err
	}
	w.size += h.recordLen()
	w.unsynced = true
	if end := w.size - int64(w.bw.Buffered()); end-w.written >= writebackStep {
		w.writeback(w.f, w.written, end-w.written)
		w.written = end
	}
	return off, nil
}

// sync flushes the buffer and fsyncs the file, making every appended
// record durable.
func (w *packWriter) sync() error {
	if w.err != nil || !w.unsynced {
		return w.err
	}
	if err := w.bw.Flush(); err != nil {
		w.err = fmt.Errorf("write pack %s: %w", w.path, err)
		return w.err
	}
	if err := w.f.Sync(); err != nil {
		w.err = fmt.Errorf("fsync pack %s: %w", w.path, err)
		return w.err
	}
	w.unsynced = false
	w.kept = w.size
	return nil
}

// close closes the file, first cutting off the records appended since the
// last sync (those of a failed or abandoned batch, which nothing
// references), and what a failed write left of one, so that they leave no
// bytes behind: on a full disk, the space the failed save took is free
// again (a failed write tears: the file may hold part of a record no
// append counted). It returns the pack's end and whether the file now
// ends exactly there (a clean end the next writer can trust). The cut is
// not synced: a crash may bring the records back, unreferenced, as it may
// any unsynced append.
func (w *packWriter) close() (end int64, clean bool) {
	if w.size == w.kept && w.err == nil && w.bw.Flush() == nil {
		return w.size, w.f.Close() == nil
	}
	err := storefs.Truncate(w.f, w.path, w.kept)
	return w.kept, w.f.Close() == nil && err == nil
}

// newPackWriter returns a writer on the newest pack that is under the size
// cap and held by no other writer, or on a new pack (created reports that:
// the packs directory then needs an fsync). A damaged pack is sealed and
// skipped.
func (s *Store) newPackWriter() (w *packWriter, created bool, err error) {
	for {
		s.mu.Lock()
		if s.mu.closed {
			s.mu.Unlock()
			return nil, false, errors.New("store closed")
		}
		n, st := s.appendCandidateLocked()
		if st == nil {
			w, err := s.createNextPackLocked()
			return w, err == nil, err
		}
		st.held = true
		size, clean := st.size, st.clean
		s.mu.Unlock()
		w, err := s.resumePack(n, size, clean)
		if errors.Is(err, ErrCorrupt) {
			s.mu.Lock()
			st.held, st.sealed = false, true
			s.mu.Unlock()
			continue
		}
		if err != nil {
			s.releasePackState(n, size, false)
		}
		return w, false, err
	}
}

// appendCandidateLocked returns the newest pack a writer may append to.
func (s *Store) appendCandidateLocked() (uint32, *packState) {
	var best *packState
	var bestN uint32
	for n, st := range s.mu.packs {
		if !st.held && !st.sealed && st.size < s.opts.PackSize && (best == nil || n > bestN) {
			best, bestN = st, n
		}
	}
	return bestN, best
}

// createPack creates pack n and buffers its header.
func (s *Store) createPack(n uint32) (*packWriter, error) {
	path := s.PackPath(n)
	f, err := s.opts.FS.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return nil, fmt.Errorf("create pack: %w", err)
	}
	w := &packWriter{n: n, path: path, f: f, bw: bufio.NewWriterSize(f, packWriterBuffer), writeback: s.writeback}
	w.bw.Write(packHeader()) // cannot fail: the buffer is larger than the header
	w.size, w.unsynced = int64(pack.HeaderLen), true
	return w, nil
}

// resumePack opens pack n for appending at its clean end, cutting off a
// torn tail left by a crash (never referenced: only synced records are).
func (s *Store) resumePack(n uint32, size int64, clean bool) (*packWriter, error) {
	path := s.PackPath(n)
	f, err := s.opts.FS.OpenReadWrite(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return nil, fmt.Errorf("open pack: %w", err)
	}
	w := &packWriter{n: n, path: path, f: f, size: size, writeback: s.writeback}
	if size >= int64(pack.HeaderLen) {
		// Only packs of the current version take appends; an older one is
		// sealed like a damaged one (ErrCorrupt), and stays readable.
		if v, err := readPackVersion(f, path); err != nil || v != pack.Version {
			f.Close()
			if err == nil {
				err = &CorruptError{Pack: path, Reason: fmt.Sprintf("pack of version %d takes no appends", v)}
			}
			return nil, err
		}
	}
	if !clean {
		end, err := scanRecords(f, path, func(recordHeader, int64) error { return nil })
		if err == nil && end != size {
			if err = storefs.Truncate(f, path, end); err != nil {
				err = fmt.Errorf("truncate pack %s: %w", path, err)
			}
		}
		if err != nil {
			f.Close()
			return nil, err
		}
		w.size, w.unsynced = end, end != size
	}
	// Appends go at the clean end (the file's own offset is that of
	// whoever opened it last, so it is not trusted).
	w.bw = bufio.NewWriterSize(io.NewOffsetWriter(f, w.size), packWriterBuffer)
	w.written, w.kept = w.size, w.size
	if w.size == 0 {
		w.bw.Write(packHeader())
		w.size, w.unsynced = int64(pack.HeaderLen), true
	}
	return w, nil
}

// releaseWriter closes w and returns its pack to the pool of append
// candidates.
func (s *Store) releaseWriter(w *packWriter) {
	end, clean := w.close()
	s.releasePackState(w.n, end, clean)
}

func (s *Store) releasePackState(n uint32, size int64, clean bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.mu.packs[n]
	st.held, st.size, st.clean = false, size, clean
	if !clean {
		if fi, err := s.opts.FS.Stat(s.PackPath(n)); err == nil {
			st.size = fi.Size()
		}
	}
}

// syncDir fsyncs the packs directory so that packs created or removed in
// it are durable.
func (s *Store) syncDir() error {
	if err := storefs.SyncDir(s.opts.FS, s.dir); err != nil {
		return fmt.Errorf("fsync %s: %w", s.dir, err)
	}
	return nil
}

// createNextPackLocked reserves the next pack number (never one used before,
// so no cached reader of a deleted pack can be confused) and creates that
// pack for the caller alone. It is called with s.mu held and returns with
// s.mu released.
func (s *Store) createNextPackLocked() (*packWriter, error) {
	n := s.mu.next
	s.mu.next++
	s.mu.packs[n] = &packState{held: true, clean: true}
	s.mu.Unlock()
	w, err := s.createPack(n)
	if err != nil {
		s.mu.Lock()
		delete(s.mu.packs, n)
		s.mu.Unlock()
	}
	return w, err
}
