package objects

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/zeebo/blake3"

	"github.com/ckpt/ckpt/objects/internal/pack"
)

// errBatchClosed is returned by Batch methods after Close.
var errBatchClosed = errors.New("batch closed")

// Batch is one writer session (one save). Put, PutBytes and Has are safe
// for concurrent use by many goroutines; Sync and Close wait for appends in
// progress. Content a Put stores that is already committed in the index or
// written by this Batch is never written again (PutRecord has its own
// rule). Nothing a Batch writes is durable until Sync returns, and nothing
// is visible to Store reads until the caller commits the Placements to its
// index.
type Batch struct {
	s      *Store
	tokens chan struct{} // one per pack writer in use; Sync and Close take them all
	// fresh: the store held no committed blob when the Batch began, so
	// dedup checks the ids it synced itself instead of the index.
	fresh bool
	// deferred: records are stored uncompressed and their packs marked for
	// recompression (DeferCompression).
	deferred bool

	gmu      sync.Mutex   // guards open
	open     *group       // small blobs waiting to be written as one group record
	flushing sync.RWMutex // held shared while a full group is written; Sync takes it

	// copied maps the id of each group record PutRecord appended to where
	// it went, so that the other members of that group share the one copy;
	// copyMu serializes PutRecord's group copies.
	copyMu sync.Mutex
	copied map[ID]Locator

	mu struct {
		sync.Mutex
		idle    []*packWriter // writers not in use
		live    []*packWriter // every open writer
		pending map[ID]*pendingBlob
		// returned: the ids the last Sync returned, whose pending entries
		// the next Sync drops (the caller has committed them by then); not
		// kept by fresh batches, whose synced answers for them at once.
		returned []ID
		synced   map[ID]struct{} // fresh batches: every id a Sync returned
		placed   []Placement     // written since the last Sync
		newPack  bool            // a pack was created since the last Sync
		written  []uint32        // packs written to (deferred batches: to mark at Sync)
		err      error           // a failure that loses written records; Sync reports it
		closed   bool
	}
}

// pendingBlob is a blob this Batch stored or is storing; done is closed
// once err is set.
type pendingBlob struct {
	done chan struct{}
	err  error
}

// NewBatch starts a writer session.
func (s *Store) NewBatch() *Batch {
	b := &Batch{s: s, tokens: make(chan struct{}, s.opts.Writers)}
	b.mu.pending = make(map[ID]*pendingBlob)
	return b
}

// NewFreshBatch starts a writer session on a store whose index holds no
// blob yet (its first save). It deduplicates against what it stored itself,
// keeping the ids it synced in memory (some 50 bytes each), instead of one
// index lookup per blob: on a large first save those lookups, each probing
// every young index table, cost a third of the CPU.
func (s *Store) NewFreshBatch() *Batch {
	b := s.NewBatch()
	b.fresh = true
	b.mu.synced = make(map[ID]struct{})
	return b
}

// committed reports whether blob id is stored already: in the index, or,
// for a fresh Batch, among the ids it synced.
func (b *Batch) committed(id ID) (bool, error) {
	if b.fresh {
		b.mu.Lock()
		_, ok := b.mu.synced[id]
		b.mu.Unlock()
		return ok, nil
	}
	_, found, err := b.s.idx.Locator(id)
	if err != nil {
		return false, fmt.Errorf("look up %s: %w", id.Short(), err)
	}
	return found, nil
}

// Put stores the content of r and returns its id and length. Memory stays
// bounded whatever the length: content above Options.ChunkThreshold is
// split into content-defined chunks, each stored as a blob, and the file's
// id (BLAKE3 of the whole content) maps to a chunk-list record listing
// them; content that makes one chunk is stored as that chunk's plain blob,
// its id the file's, with no list.
//
// Content is read into a small buffer first and into larger ones only
// when it is longer (64 KiB, 1 MiB, then ChunkThreshold bytes), so the
// many files of a save stored at once hold little memory each.
func (b *Batch) Put(r io.Reader) (ID, int64, error) { return b.PutVersion(r, ID{}) }

// PutVersion is Put for a new version of a file whose previous version is
// blob prev (zero: none known). When prev is stored, not chunked, and the
// content is at most 1 MiB, the Batch may store the content as a delta
// record against prev (Locator.Delta): zstd with prev's content as its
// dictionary, kept only when clearly smaller than the content stored
// whole, and only while prev's chain of deltas leaves room for one more
// (pack.MaxDeltaDepth). The content's id, and every read's verification,
// are those of the content whole; prev is a hint, never trusted.
func (b *Batch) PutVersion(r io.Reader, prev ID) (ID, int64, error) {
	limit := int(b.s.opts.ChunkThreshold)
	pools := [...]*sync.Pool{&b.s.headBufs, &b.s.midBufs, &b.s.smallBufs}
	sizes := [...]int{min(headBufLen, limit+1), min(midBufLen, limit+1), limit + 1}
	var read []byte // what was read so far, in the previous buffer
	for i, size := range sizes {
		if i > 0 && size == sizes[i-1] {
			continue
		}
		buf := getBuf(pools[i], size)
		defer pools[i].Put(buf)
		n := copy(*buf, read)
		m, err := io.ReadFull(r, (*buf)[n:])
		n += m
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			id, err := b.putPlain((*buf)[:n], prev)
			return id, int64(n), err
		}
		if err != nil {
			return ID{}, 0, fmt.Errorf("put: %w", err)
		}
		read = (*buf)[:n]
	}
	return b.putChunked(io.MultiReader(bytes.NewReader(read), r))
}

// headBufLen is the first read of a Put: most files of a workspace fit.
// midBufLen is the second: most of the others fit, so few Puts at a time
// hold a buffer of ChunkThreshold bytes (the largest share of a first
// save's live heap on the module corpus before, bench/README.md).
const (
	headBufLen = 64 << 10
	midBufLen  = 1 << 20
)

// PutBytes stores data (see Put) and returns its id.
func (b *Batch) PutBytes(data []byte) (ID, error) {
	if int64(len(data)) <= b.s.opts.ChunkThreshold {
		return b.putPlain(data, ID{})
	}
	id, _, err := b.putChunked(bytes.NewReader(data))
	return id, err
}

// Has reports whether blob id is stored by this Batch or committed in the
// index.
func (b *Batch) Has(id ID) (bool, error) {
	b.mu.Lock()
	p := b.mu.pending[id]
	b.mu.Unlock()
	if p != nil {
		<-p.done
		if p.err == nil {
			return true, nil
		}
	}
	return b.committed(id)
}

// putPlain stores data as one blob, a new version of blob prev (zero:
// none known).
func (b *Batch) putPlain(data []byte, prev ID) (ID, error) {
	id := Sum(data)
	return id, b.store(id, int64(len(data)), data, false, prev)
}

// putChunked splits r into content-defined chunks, stores each, then the
// chunk list under the id of the whole content. Content that makes a
// single chunk is stored as that plain blob: its id is the file's id.
func (b *Batch) putChunked(r io.Reader) (ID, int64, error) {
	cb := <-b.s.chunkBufs // waits while every chunk window is in use
	if cb == nil {
		buf := make([]byte, 2*chunkMax)
		cb = &buf
	}
	defer func() { b.s.chunkBufs <- cb }()
	cr := newChunkReader(r, *cb, 0)
	whole := blake3.New()
	var chunks []chunkRef
	var size int64
	for {
		chunk, err := cr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return ID{}, 0, fmt.Errorf("put: %w", err)
		}
		whole.Write(chunk)
		c := chunkRef{id: Sum(chunk), size: uint32(len(chunk))}
		if err := b.store(c.id, int64(len(chunk)), chunk, false, ID{}); err != nil {
			return ID{}, 0, err
		}
		chunks = append(chunks, c)
		size += int64(len(chunk))
	}
	if len(chunks) == 1 { // its id is the content's: no list to point at it
		return chunks[0].id, size, nil
	}
	id := ID(whole.Sum(nil))
	return id, size, b.store(id, size, appendChunkList(nil, chunks), true, ID{})
}

// store writes one record for id unless the Batch or the index already has
// it; concurrent stores of one id write it once and all wait for that.
// prev is the blob id is a new version of (zero: none known).
func (b *Batch) store(id ID, size int64, payload []byte, chunked bool, prev ID) error {
	b.mu.Lock()
	if b.mu.closed {
		b.mu.Unlock()
		return errBatchClosed
	}
	if p := b.mu.pending[id]; p != nil {
		b.mu.Unlock()
		<-p.done
		return p.err
	}
	p := &pendingBlob{done: make(chan struct{})}
	b.mu.pending[id] = p
	b.mu.Unlock()

	found, err := b.committed(id)
	if err == nil && !found {
		err = b.write(id, size, payload, chunked, prev)
	}
	if err != nil || found {
		// Failed, or committed already (the index answers from now on): the
		// entry is only needed by the Puts waiting on done.
		b.mu.Lock()
		delete(b.mu.pending, id)
		b.mu.Unlock()
	}
	p.err = err
	close(p.done)
	return err
}

// write compresses (plain blobs only) and appends one record, recording
// its Placement; a new version of blob prev may be a delta record, and a
// small blob goes into a group instead.
func (b *Batch) write(id ID, size int64, content []byte, chunked bool, prev ID) error {
	if !chunked && !prev.IsZero() {
		if done, err := b.writeDelta(id, content, prev); done || err != nil {
			return err
		}
	}
	if !chunked && b.s.opts.Groups && len(content) <= groupBlobMax {
		b.addToGroup(id, content)
		return nil
	}
	h := recordHeader{id: id, size: size}
	payload := content
	var scratch *[]byte
	if chunked {
		h.flags = pack.FlagChunked
	} else {
		scratch = getScratch(&b.s.packBufs)
		defer b.s.packBufs.Put(scratch)
		var err error
		if payload, h.flags, err = b.codec().compress(*scratch, content, true); err != nil {
			return err
		}
		if h.flags&pack.FlagCompressed != 0 {
			*scratch = payload[:0]
		}
	}
	h.payloadLen = uint32(len(payload))
	return b.appendPlaced(h, payload)
}

// appendPlaced appends the record of header h (payloadLen set) and payload
// to a pack and records its Placement.
func (b *Batch) appendPlaced(h recordHeader, payload []byte) error {
	w, err := b.acquire()
	if err != nil {
		return err
	}
	off, err := w.append(h, payload)
	if err == nil {
		loc := Locator{Pack: w.n, Offset: off, Length: uint32(h.recordLen()), Flags: h.flags, Size: h.size}
		b.mu.Lock()
		b.mu.placed = append(b.mu.placed, Placement{ID: h.id, Loc: loc})
		b.mu.Unlock()
	}
	b.release(w)
	return err
}

// getScratch takes a reusable byte slice from p.
func getScratch(p *sync.Pool) *[]byte {
	if b, ok := p.Get().(*[]byte); ok {
		return b
	}
	return new([]byte)
}

// acquire hands out a pack writer for exclusive use, opening one when all
// open writers are busy and fewer than Options.Writers are open.
func (b *Batch) acquire() (*packWriter, error) {
	b.tokens <- struct{}{}
	b.mu.Lock()
	if b.mu.closed {
		b.mu.Unlock()
		<-b.tokens
		return nil, errBatchClosed
	}
	if k := len(b.mu.idle); k > 0 {
		w := b.mu.idle[k-1]
		b.mu.idle = b.mu.idle[:k-1]
		b.mu.Unlock()
		return w, nil
	}
	b.mu.Unlock()
	w, created, err := b.s.newPackWriter()
	if err != nil {
		<-b.tokens
		return nil, err
	}
	b.mu.Lock()
	b.mu.live = append(b.mu.live, w)
	b.mu.newPack = b.mu.newPack || created
	if b.deferred {
		b.mu.written = append(b.mu.written, w.n)
	}
	b.mu.Unlock()
	return w, nil
}

// release returns w after an append. A writer whose pack reached the size
// cap is synced and closed so the next append starts a new pack; a broken
// writer stays out of use until Sync reports its error.
func (b *Batch) release(w *packWriter) {
	defer func() { <-b.tokens }()
	switch {
	case w.err != nil:
		return
	case w.size < b.s.opts.PackSize:
		b.mu.Lock()
		b.mu.idle = append(b.mu.idle, w)
		b.mu.Unlock()
		return
	}
	err := w.sync()
	b.s.releaseWriter(w)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mu.live = slices.DeleteFunc(b.mu.live, func(x *packWriter) bool { return x == w })
	if err != nil && b.mu.err == nil {
		b.mu.err = err
	}
}

// exclusive waits for every append in progress and blocks new ones until
// the returned function is called.
func (b *Batch) exclusive() func() {
	for range cap(b.tokens) {
		b.tokens <- struct{}{}
	}
	return func() {
		for range cap(b.tokens) {
			<-b.tokens
		}
	}
}

// Sync flushes and fsyncs every pack this Batch wrote to, and the packs
// directory when a pack was created, then returns the Placements written
// since the previous Sync. The caller commits them (all of them: chunks are
// blobs too) to its index after Sync returns and before its next Sync:
// until that next Sync the Batch itself still counts them as stored, so
// no Put in between writes a second copy. (PutRecord checks the index
// only: its placements may wait longer.) Should that commit fail, close
// the Batch: the Puts since this Sync may rest on placements the index
// lacks. An error means some records written since the last successful
// Sync may be lost; the Batch should be closed and the save abandoned.
func (b *Batch) Sync() ([]Placement, error) {
	defer b.flushGroups()()
	defer b.exclusive()()
	b.mu.Lock()
	live, newPack, err := slices.Clone(b.mu.live), b.mu.newPack, b.mu.err
	closed := b.mu.closed
	b.mu.Unlock()
	if closed {
		return nil, errBatchClosed
	}
	if err != nil {
		return nil, err
	}
	for _, w := range live {
		if err := w.sync(); err != nil {
			return nil, err
		}
	}
	b.mu.Lock()
	written := b.mu.written
	b.mu.written = nil
	b.mu.Unlock()
	if len(written) > 0 {
		if err := b.s.markDeferred(written); err != nil {
			return nil, err
		}
		newPack = true
	}
	if newPack {
		if err := b.s.syncDir(); err != nil {
			return nil, err
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	placed := b.mu.placed
	b.mu.placed, b.mu.newPack = nil, false
	// The placements the previous Sync returned are committed now, so the
	// index answers for them and their pending entries go: the map holds
	// what two Syncs' intervals wrote, no more. These placements keep
	// theirs until the caller's commit: a Put in between finding neither
	// would write the blob again. A fresh batch's synced answers for them
	// from now on, so theirs go at once (a first save, the largest, keeps
	// one interval's).
	for _, id := range b.mu.returned {
		delete(b.mu.pending, id)
	}
	b.mu.returned = b.mu.returned[:0]
	for _, pl := range placed {
		if b.fresh {
			b.mu.synced[pl.ID] = struct{}{}
			delete(b.mu.pending, pl.ID)
		} else {
			b.mu.returned = append(b.mu.returned, pl.ID)
		}
	}
	return placed, nil
}

// Close releases the Batch's pack writers, cutting the records not yet
// Synced off their packs (nothing references them), so that a failed or
// abandoned batch gives back the space it took. Close is idempotent;
// every other method fails after it.
func (b *Batch) Close() error {
	defer b.exclusive()()
	b.mu.Lock()
	live := b.mu.live
	b.mu.live, b.mu.idle, b.mu.closed = nil, nil, true
	b.mu.Unlock()
	b.gmu.Lock()
	b.open = nil // never written: its blobs were never synced
	b.gmu.Unlock()
	for _, w := range live {
		b.s.releaseWriter(w)
	}
	return nil
}
