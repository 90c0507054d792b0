package remotesync

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/ckpt/ckpt/engine/remote"
	"github.com/ckpt/ckpt/objects"
)

// Ranged reads: records of one data object closer than fetchGap are read
// by one request, up to fetchSpan bytes; fetches run fetchers at a time.
// A span is small enough that the first of a streamed fetch's records
// arrive early (Stream), and large enough that a request's latency is
// spread over many records.
const (
	fetchGap  = 256 << 10
	fetchSpan = 4 << 20
	fetchers  = 8
)

// FetchResult says what a fetch brought in.
type FetchResult struct {
	Blobs    int   // blobs of the Wants stored locally; by a fetch that failed, the blobs it kept, chunks counted
	Bytes    int64 // bytes read from the remote
	Requests int   // ranged reads made
}

// Wants are the blobs one fetch brings from the remote (Syncer.Wanted).
type Wants struct{ list []want }

// Len is how many blobs w holds.
func (w Wants) Len() int { return len(w.list) }

// Order returns the ids of w in the order Stream hands their contents
// over: in the order their records are read, the blobs of chunked files
// (stored, never handed over, read from the store once Stream has
// returned) last.
func (w Wants) Order() []objects.ID {
	sortForFetch(w.list)
	ids := make([]objects.ID, 0, len(w.list))
	var chunked []objects.ID
	for _, x := range w.list {
		if x.loc.objectsLocator().Chunked() {
			chunked = append(chunked, x.id)
		} else {
			ids = append(ids, x.id)
		}
	}
	return append(ids, chunked...)
}

// Fetch copies the blobs w from the remote into the store: each record
// read by coalesced ranged reads, verified against its id and stored as
// it is (no recompression), a chunked file's chunks with it. A chunk the
// record does not place on the remote is an error wrapping
// objects.ErrNotFound; a blob that does not verify is a *CorruptError.
// The locators are committed as the fetch goes, at its end and when it
// fails: a fetch cut off keeps the blobs it stored and verified (a chunked
// file's only with all its chunks; keeper), and the next fetch reads only
// the rest.
func (s *Syncer) Fetch(ctx context.Context, w Wants) (FetchResult, error) {
	return s.Stream(ctx, w, nil, nil)
}

// Stream is Fetch handing each blob's verified content to arrive (called
// from several goroutines, never twice for one blob) as soon as its
// record is in, before the fetch ends and commits: the ranged reads start
// in the order of the records on the remote, which w.Order follows, at
// most fetchers at a time, each after room returns (room blocks while
// the caller holds too much of what arrived; its error ends the fetch).
// The records of chunked files, their chunk lists, are read first (not
// waiting for room: nothing of them is handed over), and their chunks in
// the ordered pass with the other blobs; neither a chunked file's blob
// nor its chunks are handed over: it can be read from the store once
// Stream has returned. Nil room and arrive make Stream a Fetch.
func (s *Syncer) Stream(ctx context.Context, w Wants, room func(context.Context) error, arrive func(objects.ID, []byte)) (FetchResult, error) {
	var res FetchResult
	wants := w.list
	if len(wants) == 0 {
		return res, nil
	}
	k := s.newKeeper()
	defer k.close()
	store := func(rec []byte, ws []want) error {
		if err := k.put.PutRecord(rec, placements(ws)); err != nil {
			return recordErr(ws[0], err)
		}
		return k.stored(len(rec))
	}
	// The chunk lists of chunked files first, so that their chunks come
	// in the one ordered pass with the other blobs.
	plain, err := s.withChunks(ctx, wants, &res, store)
	if err == nil {
		err = s.fetchRecords(ctx, plain, &res, room, func(rec []byte, ws []want) error {
			// What is not handed over is stored without being decoded for
			// the writes: a record may hold a small last chunk beside the
			// small files handed over.
			kept, handed := ws, []want(nil)
			if arrive != nil {
				kept, handed = splitWants(ws, func(w want) bool { return w.chunk })
			}
			if len(kept) > 0 {
				if err := k.put.PutRecord(rec, placements(kept)); err != nil {
					return recordErr(kept[0], err)
				}
			}
			if len(handed) > 0 {
				data, err := k.put.PutDecodedRecord(rec, placements(handed))
				if err != nil {
					return recordErr(handed[0], err)
				}
				for i, w := range handed {
					arrive(w.id, data[i])
				}
			}
			return k.stored(len(rec))
		})
	}
	if err != nil {
		err = k.keep(err)
		res.Blobs = k.blobs
		return res, err
	}
	if err := k.commit(true); err != nil {
		return res, err
	}
	res.Blobs = len(wants)
	return res, nil
}

// withChunks fetches and stores the records of the chunked files among
// wants (their chunk lists), and returns the other wants with the chunks
// the store lacks: each blob once.
func (s *Syncer) withChunks(ctx context.Context, wants []want, res *FetchResult, store func([]byte, []want) error) ([]want, error) {
	chunked, plain := splitWants(wants, func(w want) bool { return w.loc.objectsLocator().Chunked() })
	if len(chunked) == 0 {
		return plain, nil
	}
	var mu sync.Mutex
	var chunks []objects.ID
	err := s.fetchRecords(ctx, chunked, res, nil, func(rec []byte, ws []want) error {
		ids, err := s.chunkIDs(ws[0], rec)
		if err != nil {
			return err
		}
		mu.Lock()
		chunks = append(chunks, ids...)
		mu.Unlock()
		return store(rec, ws)
	})
	if err != nil {
		return nil, err
	}
	more, err := s.wantedAll(chunks)
	if err != nil {
		return nil, err
	}
	coming := make(map[objects.ID]bool, len(plain))
	for _, w := range plain {
		coming[w.id] = true
	}
	for _, c := range more {
		if !coming[c.id] {
			c.chunk = true
			plain = append(plain, c)
		}
	}
	return plain, nil
}

// splitWants splits ws into those f is true of and the others.
func splitWants(ws []want, f func(want) bool) (yes, no []want) {
	for _, w := range ws {
		if f(w) {
			yes = append(yes, w)
		} else {
			no = append(no, w)
		}
	}
	return yes, no
}

// recordErr names the remote object of a record that failed to verify.
func recordErr(w want, err error) error {
	if errors.Is(err, objects.ErrCorrupt) {
		return &CorruptError{Key: dataKey(w.loc.Object), Reason: fmt.Sprintf("record of blob %s at %d", w.id.Short(), w.loc.Offset), Err: err}
	}
	return err
}

// decode verifies the record rec once and returns the content of each of
// ws, the blobs it holds.
func (s *Syncer) decode(rec []byte, ws []want) ([][]byte, error) {
	data, err := s.Blobs.DecodeRecord(rec, placements(ws))
	return data, recordErr(ws[0], err)
}

// placements describes ws, blobs of one record, as the objects layer
// locates them.
func placements(ws []want) []objects.Placement {
	out := make([]objects.Placement, len(ws))
	for i, w := range ws {
		out[i] = objects.Placement{ID: w.id, Loc: w.loc.objectsLocator()}
	}
	return out
}

// chunkIDs returns the chunks the chunked record of w lists.
func (s *Syncer) chunkIDs(w want, rec []byte) ([]objects.ID, error) {
	list, err := s.decode(rec, []want{w})
	if err != nil {
		return nil, err
	}
	ids, err := objects.ChunkIDs(list[0], w.loc.Size)
	return ids, recordErr(w, err)
}

// FetchInto is Fetch handing each blob's verified content to keep (called
// from several goroutines) instead of storing it: a chunked file's chunks
// are fetched and joined, and the whole checked against its id.
func (s *Syncer) FetchInto(ctx context.Context, w Wants, keep func(id objects.ID, content []byte) error) (FetchResult, error) {
	var res FetchResult
	wants := w.list
	if len(wants) == 0 {
		return res, nil
	}
	var mu sync.Mutex
	lists := map[want][]objects.ID{} // chunked blobs and their chunks
	err := s.fetchRecords(ctx, wants, &res, nil, func(rec []byte, ws []want) error {
		data, err := s.decode(rec, ws)
		if err != nil {
			return err
		}
		if w := ws[0]; w.loc.objectsLocator().Chunked() {
			ids, err := objects.ChunkIDs(data[0], w.loc.Size)
			mu.Lock()
			lists[w] = ids
			mu.Unlock()
			return recordErr(w, err)
		}
		for i, w := range ws {
			if err := keep(w.id, data[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	for w, chunks := range lists {
		content, err := s.joinChunks(ctx, w, chunks, &res)
		if err != nil {
			return res, err
		}
		if err := keep(w.id, content); err != nil {
			return res, err
		}
	}
	res.Blobs = len(wants)
	return res, nil
}

// want is one blob to fetch and where the remote keeps it.
type want struct {
	id    objects.ID
	loc   Loc
	chunk bool // a chunk of a chunked file the fetch brings: stored, not handed over
}

// Wanted splits ids into the blobs the store lacks that the remote holds
// (by this store's record of the remote), returned as Wants, and those the
// store lacks that the remote does not hold; a blob the store holds, and
// an id given again, is in neither, and each list is in id order. held,
// when set, is told where the store holds each of the others (from one
// goroutine, after the lookups). The lookups run on every core, each
// core's share of the ids in order with two passes of the index, its
// locators then the record's entries: a clone asks about every blob of a
// workspace.
func (s *Syncer) Wanted(ids []objects.ID, held func(objects.ID, objects.Locator)) (Wants, []objects.ID, error) {
	seen := make(map[objects.ID]bool, len(ids))
	unique := make([]objects.ID, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			unique = append(unique, id)
		}
	}
	type split struct {
		wants   []want
		missing []objects.ID
		held    []objects.Placement
	}
	slices.SortFunc(unique, objects.CompareIDs)
	parts := make([]split, runtime.GOMAXPROCS(0))
	per := (len(unique) + len(parts) - 1) / len(parts)
	var g errgroup.Group
	for i := range parts {
		part := unique[min(i*per, len(unique)):min((i+1)*per, len(unique))]
		g.Go(func() error {
			var keys []string // of the record's entries of the blobs the store lacks
			var lacking []objects.ID
			err := s.DB.LocatorsOf(part, func(id objects.ID, loc objects.Locator, found bool) error {
				switch {
				case !found:
					lacking = append(lacking, id)
					keys = append(keys, s.blobKey(id))
				case held != nil:
					parts[i].held = append(parts[i].held, objects.Placement{ID: id, Loc: loc})
				}
				return nil
			})
			if err != nil {
				return err
			}
			return s.DB.ConfigsOf(keys, func(j int, v string, found bool) error {
				if l, ok := recorded(v, found); ok {
					parts[i].wants = append(parts[i].wants, want{id: lacking[j], loc: l})
				} else {
					parts[i].missing = append(parts[i].missing, lacking[j])
				}
				return nil
			})
		})
	}
	if err := g.Wait(); err != nil {
		return Wants{}, nil, err
	}
	var w Wants
	var missing []objects.ID
	for _, p := range parts {
		w.list = append(w.list, p.wants...)
		missing = append(missing, p.missing...)
		for _, h := range p.held {
			held(h.ID, h.Loc)
		}
	}
	return w, missing, nil
}

// wantedAll is Wanted for blobs the remote must hold: the chunks of a
// chunked file it holds. One it does not is an error wrapping
// objects.ErrNotFound.
func (s *Syncer) wantedAll(ids []objects.ID) ([]want, error) {
	w, missing, err := s.Wanted(ids, nil)
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("blob %s is neither in the store nor on remote %q: %w", missing[0].Short(), s.Name, objects.ErrNotFound)
	}
	return w.list, nil
}

// joinChunks fetches the chunks of w the store lacks, joins them with
// those it has and returns the whole content, checked against w's id.
func (s *Syncer) joinChunks(ctx context.Context, w want, chunks []objects.ID, res *FetchResult) ([]byte, error) {
	wants, err := s.wantedAll(chunks)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	got := map[objects.ID][]byte{}
	err = s.fetchRecords(ctx, wants, res, nil, func(rec []byte, cs []want) error {
		data, err := s.decode(rec, cs)
		if err != nil {
			return err
		}
		mu.Lock()
		for i, c := range cs {
			got[c.id] = data[i]
		}
		mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, err
	}
	content := make([]byte, 0, w.loc.Size)
	for _, c := range chunks {
		data, ok := got[c]
		if !ok {
			if data, err = s.Blobs.Get(c); err != nil {
				return nil, err
			}
		}
		content = append(content, data...)
	}
	if objects.Sum(content) != w.id {
		return nil, &CorruptError{Key: dataKey(w.loc.Object), Reason: "chunks of blob " + w.id.Short() + " do not join to its content"}
	}
	return content, nil
}

// span is one ranged read: the records of wants, all in one data object.
type span struct {
	object     objects.ID
	start, end int64
	wants      []want
}

// spans groups wants into coalesced ranged reads.
func spans(wants []want) []span {
	sortForFetch(wants)
	var out []span
	for _, w := range wants {
		end := w.loc.Offset + int64(w.loc.Length)
		if n := len(out); n > 0 {
			last := &out[n-1]
			if last.object == w.loc.Object && w.loc.Offset <= last.end+fetchGap && max(end, last.end)-last.start <= fetchSpan {
				last.end = max(last.end, end)
				last.wants = append(last.wants, w)
				continue
			}
		}
		out = append(out, span{object: w.loc.Object, start: w.loc.Offset, end: end, wants: []want{w}})
	}
	return out
}

// sortForFetch sorts wants in the order of their records on the remote:
// by data object, then offset.
func sortForFetch(wants []want) {
	slices.SortFunc(wants, func(a, b want) int {
		return cmp.Or(bytes.Compare(a.loc.Object[:], b.loc.Object[:]), cmp.Compare(a.loc.Offset, b.loc.Offset))
	})
}

// sameRecord yields runs of wants (sorted by object and offset, as spans
// sorts them) that one record holds.
func sameRecord(wants []want) iter.Seq[[]want] {
	return func(yield func([]want) bool) {
		for start := 0; start < len(wants); {
			end := start + 1
			for end < len(wants) && wants[end].loc.Offset == wants[start].loc.Offset && wants[end].loc.Object == wants[start].loc.Object {
				end++
			}
			if !yield(wants[start:end]) {
				return
			}
			start = end
		}
	}
}

// fetchRecords reads the records of wants by coalesced ranged reads and
// calls fn (from several goroutines) once per record, with its bytes, not
// yet verified, and the wants it holds (several members of a group record
// come together, so that it is verified once). The reads start in the
// order of the records on the remote, each after room returns, when
// room is set.
func (s *Syncer) fetchRecords(ctx context.Context, wants []want, res *FetchResult, room func(context.Context) error, fn func([]byte, []want) error) error {
	all := spans(wants)
	var total, done int64
	for _, sp := range all {
		total += sp.end - sp.start
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(fetchers)
	var roomErr error
	started := 0
	for _, sp := range all {
		if room != nil {
			if roomErr = room(gctx); roomErr != nil {
				break
			}
		}
		started++
		g.Go(func() error {
			buf, err := s.readRange(gctx, sp)
			if err != nil {
				return err
			}
			for ws := range sameRecord(sp.wants) {
				w := ws[0]
				if err := fn(buf[w.loc.Offset-sp.start:w.loc.Offset-sp.start+int64(w.loc.Length)], ws); err != nil {
					return err
				}
			}
			s.progress("fetch", atomic.AddInt64(&done, int64(len(buf))), total)
			return nil
		})
	}
	err := g.Wait()
	res.Requests += started
	res.Bytes += atomic.LoadInt64(&done)
	if err == nil {
		err = roomErr
	}
	return err
}

// readRange reads the bytes of sp from its data object.
func (s *Syncer) readRange(ctx context.Context, sp span) ([]byte, error) {
	key := dataKey(sp.object)
	atomic.AddInt64(&s.counters.Gets, 1)
	rc, err := s.Backend.GetRange(ctx, key, sp.start, sp.end-sp.start)
	if errors.Is(err, remote.ErrNotFound) {
		return nil, &CorruptError{Key: key, Reason: "data object a segment names is missing", Err: err}
	}
	if err != nil {
		return nil, s.rangeError(ctx, key, sp.end, err)
	}
	defer rc.Close()
	buf := make([]byte, sp.end-sp.start)
	if _, err := io.ReadFull(rc, buf); err != nil {
		return nil, s.rangeError(ctx, key, sp.end, err)
	}
	atomic.AddInt64(&s.counters.BytesDown, int64(len(buf)))
	return buf, nil
}

// rangeError accounts for a ranged read of key up to end that failed with
// err. A read that ended early (io.ErrUnexpectedEOF, io.EOF) is a
// *CorruptError when the object is indeed shorter than the records a
// segment places in it; otherwise the connection was cut short, and err
// stands.
func (s *Syncer) rangeError(ctx context.Context, key string, end int64, err error) error {
	if !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return readError(key, err)
	}
	atomic.AddInt64(&s.counters.Stats, 1)
	info, serr := s.Backend.Stat(ctx, key)
	switch {
	case errors.Is(serr, remote.ErrNotFound):
		return &CorruptError{Key: key, Reason: "data object a segment names is missing", Err: serr}
	case serr != nil:
		return readError(key, serr)
	case info.Size < end:
		return &CorruptError{Key: key, Reason: fmt.Sprintf("data object of %d bytes is shorter than its records (%d)", info.Size, end), Err: err}
	}
	return readError(key, err)
}
