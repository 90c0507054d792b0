package remotesync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/ckpt/ckpt/engine/remote"
	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/objects"
)

// Syncer moves one store's data to and from one remote. The caller holds
// the store's lock and keeps other writers of the task out while a Push or
// Pull runs; Fetch may run beside reads.
type Syncer struct {
	DB      *index.DB
	Blobs   *objects.Store
	Backend remote.Backend
	// Name is the remote's name in the store: the local record lives
	// under "sync/<Name>/".
	Name string
	// Progress, when set, is called as a push or pull advances.
	Progress func(Progress)
	// ObjectSize is the size a data object grows to before the next one
	// starts; 0 means 16 MiB. Tests make it small to get many objects.
	ObjectSize int64
	// KeepEvery is how many bytes of records a fetch stores between two
	// commits of them (keeper); 0 means 64 MiB. Tests make it small.
	KeepEvery int64
	// Names, when set, names data objects, segments and heads by keyed
	// hashes instead of plain BLAKE3 (doc.go), for an encrypted remote.
	Names Namer

	counters Counters
}

// Progress reports how far a push, pull or fetch got in its current phase.
type Progress struct {
	Phase       string // "scan", "upload", "segment", "head", "import", "fetch"
	Done, Total int64  // bytes for upload and fetch, objects otherwise
}

// Counters are what one Syncer sent and received, for reports and tests.
type Counters struct {
	Puts, Gets, Stats     int64
	BytesUp, BytesDown    int64
	ObjectsUp, SegmentsUp int64
}

// Counters returns the traffic so far.
func (s *Syncer) Counters() Counters {
	return Counters{
		Puts: atomic.LoadInt64(&s.counters.Puts), Gets: atomic.LoadInt64(&s.counters.Gets),
		Stats: atomic.LoadInt64(&s.counters.Stats), BytesUp: atomic.LoadInt64(&s.counters.BytesUp),
		BytesDown: atomic.LoadInt64(&s.counters.BytesDown), ObjectsUp: atomic.LoadInt64(&s.counters.ObjectsUp),
		SegmentsUp: atomic.LoadInt64(&s.counters.SegmentsUp),
	}
}

func (s *Syncer) progress(phase string, done, total int64) {
	if s.Progress != nil {
		s.Progress(Progress{Phase: phase, Done: done, Total: total})
	}
}

// Record keys (doc.go).
func (s *Syncer) blobKey(id objects.ID) string { return "sync/" + s.Name + "/b/" + string(id[:]) }
func (s *Syncer) cpKey(id objects.ID) string   { return "sync/" + s.Name + "/c/" + string(id[:]) }
func (s *Syncer) segKey(seg string) string     { return "sync/" + s.Name + "/s/" + seg }

// RecordPrefix is the prefix of every local record key of remote name.
func RecordPrefix(name string) string { return "sync/" + name + "/" }

// recordedLoc returns where the record says the remote keeps blob id.
func (s *Syncer) recordedLoc(id objects.ID) (Loc, bool, error) {
	v, ok, err := s.DB.Config(s.blobKey(id))
	if err != nil {
		return Loc{}, false, err
	}
	l, ok := recorded(v, ok)
	return l, ok, nil
}

// recorded decodes v, the record's entry of a blob (found false: none).
// A damaged entry is forgotten, not trusted: the remote is asked again.
func recorded(v string, found bool) (Loc, bool) {
	if !found {
		return Loc{}, false
	}
	l, err := decodeLoc([]byte(v))
	return l, err == nil
}

// recordedSegment returns the segment the record says holds checkpoint id.
func (s *Syncer) recordedSegment(id objects.ID) (string, bool, error) {
	return s.DB.Config(s.cpKey(id))
}

// Has reports whether the local record locates blob id on the remote.
func (s *Syncer) Has(id objects.ID) (bool, error) {
	_, ok, err := s.recordedLoc(id)
	return ok, err
}

// readHead reads task's head; found is false when the remote has none.
// A head older than one this store saw there is a *CorruptError (rollback.go).
func (s *Syncer) readHead(ctx context.Context, task string) (h Head, etag string, found bool, err error) {
	key := s.headKey(task)
	atomic.AddInt64(&s.counters.Gets, 1)
	rc, info, err := s.Backend.Get(ctx, key)
	if errors.Is(err, remote.ErrNotFound) {
		return h, "", false, s.checkSeen(key, task, 0)
	}
	if err != nil {
		return h, "", false, readError(key, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, 64<<20))
	if err != nil {
		return h, "", false, fmt.Errorf("read head of task %q: %w", task, err)
	}
	atomic.AddInt64(&s.counters.BytesDown, int64(len(b)))
	if h, err = decodeHead(key, task, b); err != nil {
		return h, "", false, err
	}
	return h, info.ETag, true, s.checkSeen(key, task, h.Gen)
}

// getObject reads the whole object key.
func (s *Syncer) getObject(ctx context.Context, key string) ([]byte, error) {
	atomic.AddInt64(&s.counters.Gets, 1)
	rc, _, err := s.Backend.Get(ctx, key)
	if err != nil {
		return nil, readError(key, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", key, err)
	}
	atomic.AddInt64(&s.counters.BytesDown, int64(len(b)))
	return b, nil
}

// readSegment fetches and decodes segment name (hex).
func (s *Syncer) readSegment(ctx context.Context, name string) (*segment, error) {
	id, err := objects.ParseID(name)
	if err != nil {
		return nil, &CorruptError{Key: "meta/" + name, Reason: "malformed segment name"}
	}
	b, err := s.getObject(ctx, metaKey(id))
	if errors.Is(err, remote.ErrNotFound) {
		return nil, &CorruptError{Key: metaKey(id), Reason: "segment named by a head is missing", Err: err}
	}
	if err != nil {
		return nil, err
	}
	return s.decodeNamed(id, b)
}

// putImmutable stores b under key unless it is there already (same name,
// same bytes), and reports whether it uploaded.
func (s *Syncer) putImmutable(ctx context.Context, key string, b []byte) (bool, error) {
	atomic.AddInt64(&s.counters.Puts, 1)
	_, err := s.Backend.Put(ctx, key, bytes.NewReader(b), int64(len(b)), remote.IfAbsent())
	if errors.Is(err, remote.ErrPrecondition) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("upload %s: %w", key, err)
	}
	atomic.AddInt64(&s.counters.BytesUp, int64(len(b)))
	return true, nil
}

// exists reports whether key is on the remote.
func (s *Syncer) exists(ctx context.Context, key string) (bool, error) {
	atomic.AddInt64(&s.counters.Stats, 1)
	_, err := s.Backend.Stat(ctx, key)
	if errors.Is(err, remote.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, readError(key, err)
	}
	return true, nil
}

// readError accounts for a failed request for key: an object the backend
// finds damaged (remote.ErrDamaged) is a *CorruptError, anything else the
// error it is.
func readError(key string, err error) error {
	if errors.Is(err, remote.ErrDamaged) {
		return &CorruptError{Key: key, Reason: "damaged object", Err: err}
	}
	return fmt.Errorf("read %s: %w", key, err)
}
