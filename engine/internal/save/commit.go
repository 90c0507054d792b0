package save

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/ckpt/ckpt/diffview"
	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/objects"
)

// NewBatch starts the blob batch of a save: a fresh one (no index lookup
// per blob, and compression deferred with DeferFirstCompression) when the
// store holds no blob yet.
func (st *Store) NewBatch() (*objects.Batch, error) {
	has, err := st.DB.HasLocators()
	if err != nil {
		return nil, err
	}
	if !has {
		b := st.Blobs.NewFreshBatch()
		if st.DeferFirstCompression {
			b.DeferCompression()
		}
		return b, nil
	}
	return st.Blobs.NewBatch(), nil
}

// Commit makes a save durable: pack data first (fsynced by Sync),
// then one synced index batch with the locators, the trees and stat cache
// not yet flushed by the scan and, when cp is set, the checkpoint and the
// task's new head. Only this batch makes anything visible: what the scan
// flushed earlier is unreferenced until it commits. Once it has, the
// Tracker (if any) forgets the changes the scan covered.
func (st *Store) Commit(blobs *objects.Batch, snap *Snapshot, cp *index.Checkpoint, task string, head index.TaskHead) error {
	var last func(b *index.Batch) error
	if cp != nil {
		last = func(b *index.Batch) error {
			id, err := b.PutCheckpoint(*cp)
			if err != nil {
				return err
			}
			b.SetTaskHead(task, index.TaskHead{Head: id, LastSeq: max(head.LastSeq, cp.Seq)})
			return nil
		}
	}
	return st.commit(blobs, snap, last)
}

// Keep commits what the scan stored with no checkpoint, as Commit does,
// but synced: for a scan whose tree an existing checkpoint holds and that
// stands for a new one (a restore's backup), whose blobs the scan stored
// (ones that checkpoint had left on a remote) must outlive a crash as a
// checkpoint's would.
func (st *Store) Keep(blobs *objects.Batch, snap *Snapshot) error {
	return st.commit(blobs, snap, func(*index.Batch) error { return nil })
}

// commit writes the index (writeIndex) and, once it has, lets the Tracker
// (if any) forget the changes the scan covered.
func (st *Store) commit(blobs *objects.Batch, snap *Snapshot, last func(b *index.Batch) error) error {
	err := st.writeIndex(blobs, &snap.Pending, last)
	if err == nil && st.Tracker != nil {
		st.Tracker.Settle(snap)
	}
	return err
}

// writeIndex syncs the packs, then commits one index batch with the new
// locators, trees (as deltas of their bases where that is smaller) and
// stat-cache changes, plus whatever last adds. The order makes every
// committed locator point at durable pack bytes and every committed
// stat-cache record name committed blobs and trees. Without last (a scan's
// flush, a save that found nothing changed) the batch names no checkpoint:
// it is committed without waiting for the disk (index.Batch.CommitUnsynced),
// since losing it costs only the reading again, and the next synced
// commit makes it durable first. The trees and stat-cache records go into
// the batch, on every core, while the packs sync: nothing in a batch is
// visible before its commit, which waits for both.
func (st *Store) writeIndex(blobs *objects.Batch, p *Pending, last func(b *index.Batch) error) error {
	b := st.DB.NewBatch()
	defer b.Close()
	var puts errgroup.Group
	puts.Go(func() error { return putRecords(b, p, !st.StatCacheReadOnly) })
	placements, err := blobs.Sync()
	if perr := puts.Wait(); err == nil && perr != nil {
		return perr
	}
	if err != nil {
		return fmt.Errorf("write packs: %w", err)
	}
	for _, p := range placements {
		b.PutLocator(p.ID, p.Loc)
	}
	commit := b.CommitUnsynced
	if last != nil {
		if err := last(b); err != nil {
			return err
		}
		commit = b.Commit
	}
	if err := commit(); err != nil {
		return fmt.Errorf("commit index: %w", err)
	}
	return nil
}

// putRecords adds p's trees, and its stat-cache changes when cache is
// set, to b, the trees spread over the
// machine's cores: a tree put looks its id (and its base, for a delta) up
// in the index, and an edit deep in a tree changes every directory above
// it, some hundreds of trees.
func putRecords(b *index.Batch, p *Pending, cache bool) error {
	ids := slices.Collect(maps.Keys(p.Trees))
	workers := min(runtime.GOMAXPROCS(0), len(ids)/minTreesPerWorker+1)
	var g errgroup.Group
	for w := range workers {
		g.Go(func() error {
			for i := w; i < len(ids); i += workers {
				if _, err := b.PutTreeAgainst(p.Trees[ids[i]], p.Bases[ids[i]]); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if cache {
		putStatCache(b, p)
	}
	return g.Wait()
}

// minTreesPerWorker is the fewest trees worth another goroutine.
const minTreesPerWorker = 64

// putStatCache adds p's stat-cache changes to b: the records of the
// directories scanned, and the removal of those of directories gone.
func putStatCache(b *index.Batch, p *Pending) {
	for dir, dc := range p.Caches {
		b.PutDirCache(dir, dc)
	}
	for _, dir := range p.GoneDirs {
		b.DeleteDirCacheTree(dir)
	}
}

// ChangeStats counts the files added, modified and deleted since base.
func (store *Store) ChangeStats(ctx context.Context, snap *Snapshot, base objects.ID) (index.Stats, error) {
	var st index.Stats
	if base.IsZero() && !snap.Partial() { // a task's first checkpoint: everything is new, no need to list it
		st.Added = snap.Files.Load()
		return st, nil
	}
	changes, err := diffview.Compare(ctx, store.TreeSource(snap), base, snap.Root, nil)
	if err != nil {
		return st, err
	}
	for _, c := range changes {
		switch c.Status {
		case diffview.StatusAdded:
			st.Added++
		case diffview.StatusDeleted:
			st.Deleted++
		default:
			st.Modified++
		}
	}
	return st, nil
}

// layeredTrees serves trees computed by a scan first, then the index. Both
// are shared, not copied: its readers only read them.
type layeredTrees struct {
	fresh map[objects.ID]objects.Tree
	db    *index.DB
}

func (l layeredTrees) Tree(id objects.ID) (objects.Tree, error) {
	if t, ok := l.fresh[id]; ok {
		return t, nil
	}
	return l.db.SharedTree(id)
}

// TreeSource returns a source that sees snap's trees (nil snap: the index
// only). The trees it returns are shared with the snapshot and the index's
// memory: they must only be read.
func (st *Store) TreeSource(snap *Snapshot) diffview.TreeSource {
	l := layeredTrees{db: st.DB}
	if snap != nil {
		l.fresh = snap.Trees
	}
	return l
}
