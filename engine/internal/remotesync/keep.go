package remotesync

import (
	"cmp"
	"sync"
	"sync/atomic"

	"github.com/ckpt/ckpt/objects"
)

// keepEvery is how many bytes of records a fetch stores between two
// commits of what it stored, unless Syncer.KeepEvery says otherwise: a
// fetch killed with its process keeps all but its last few.
const keepEvery = 64 << 20

// keeper stores the records a fetch brings and commits their locators as
// it goes (every keepEvery bytes, or Syncer.KeepEvery), at its end, and
// when it fails: a fetch cut off (a dropped connection, a cancelled
// context, a record that does not verify, a killed process) keeps the
// blobs it stored and verified, and fetching again reads only the rest. A
// chunked file's blob is committed only at the end, with its chunks: a
// blob the index holds is always readable.
type keeper struct {
	s     *Syncer
	put   *objects.Batch
	every int64        // bytes stored between two commits
	since atomic.Int64 // bytes stored since the last commit

	mu      sync.Mutex          // serializes commits
	chunked []objects.Placement // stored, committed at the end
	blobs   int                 // blobs committed
}

// newKeeper starts storing the records of one fetch.
func (s *Syncer) newKeeper() *keeper {
	return &keeper{s: s, put: s.Blobs.NewBatch(), every: cmp.Or(s.KeepEvery, keepEvery)}
}

// stored counts n bytes of records stored, and commits once k.every
// have been since the last commit, unless another commit runs.
func (k *keeper) stored(n int) error {
	if k.since.Add(int64(n)) < k.every || !k.mu.TryLock() {
		return nil
	}
	defer k.mu.Unlock()
	return k.commitLocked(false)
}

// commit makes what k stored durable and commits its locators; the blobs
// of chunked files only when all is set (their chunks are stored).
func (k *keeper) commit(all bool) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.commitLocked(all)
}

// commitLocked is commit with k.mu held.
func (k *keeper) commitLocked(all bool) error {
	k.since.Store(0)
	placed, err := k.put.Sync()
	if err != nil {
		return err
	}
	b := k.s.DB.NewBatch()
	defer b.Close()
	n := 0
	for _, p := range placed {
		if p.Loc.Chunked() {
			k.chunked = append(k.chunked, p)
			continue
		}
		b.PutLocator(p.ID, p.Loc)
		n++
	}
	if all {
		for _, p := range k.chunked {
			b.PutLocator(p.ID, p.Loc)
		}
		n += len(k.chunked)
		k.chunked = nil
	}
	if err := b.Commit(); err != nil {
		return err
	}
	k.blobs += n
	return nil
}

// keep commits what k stored before a fetch failed with err, and returns
// err: a failure to keep it loses only the fetch's progress (the records
// stay in the packs, unreferenced, until a collection).
func (k *keeper) keep(err error) error {
	_ = k.commit(false)
	return err
}

// close releases k's pack writers.
func (k *keeper) close() { k.put.Close() }
