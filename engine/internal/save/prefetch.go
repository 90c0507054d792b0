package save

import (
	"maps"
	"path"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/internal/osfs"
	"github.com/ckpt/ckpt/objects"
)

// prefetchQueue bounds the paths heard of and not yet looked at: beyond
// it Heard drops them, which costs only the head start.
const prefetchQueue = 4096

// Prefetcher reads, between an edit and the save that captures it, what
// that save will read to store the edit compactly:
//   - the stored version of each file the watcher heard written
//     (watch.Options.Written), as the stat cache records it: the save
//     stores the new content as a delta against it, and reading it means
//     decoding its group's frame up to it;
//   - the stored tree of the file's directory and of each directory above
//     it: the save stores their new trees as deltas against those;
//   - the file's new content, whose delta record against that version it
//     encodes ahead (objects.Store.PrepareVersion), unless a save is
//     running (Hold): the save then writes the prepared record if the
//     file still holds that content, and encodes nothing.
//
// After an edit of a hundred source files the reads were a third of the
// save and the encoding another third; the store's group cache, its
// prepared records and the index's tree memo then hold them for it. It is
// a head start only: it changes nothing in the store or the index, and a
// path it never hears of, drops, or reads too late costs the save exactly
// what it cost before. It reads on one goroutine, so it takes at most one
// core from the host.
type Prefetcher struct {
	db        *index.DB
	blobs     *objects.Store
	workspace string
	queue     chan string
	muted     atomic.Int32
	held      atomic.Int32
	stop      chan struct{}
	done      chan struct{}
	once      sync.Once
	// warmed, when set (by tests), is told of each file version read
	// ahead: the file's path, the version's id, and whether the delta
	// record of the file's content against it was prepared.
	warmed func(rel string, id objects.ID, prepared bool)
}

// NewPrefetcher returns a Prefetcher over the stat caches of db, the blobs
// they name and the files of workspace; its paths are heard by Heard and
// read once Start runs.
func NewPrefetcher(db *index.DB, blobs *objects.Store, workspace string, warmed func(rel string, id objects.ID, prepared bool)) *Prefetcher {
	return &Prefetcher{db: db, blobs: blobs, workspace: workspace, queue: make(chan string, prefetchQueue),
		stop: make(chan struct{}), done: make(chan struct{}), warmed: warmed}
}

// Heard takes the workspace-relative path of a file written since the last
// save, to read ahead for it; it never blocks (a path that finds the queue
// full, or the Prefetcher muted, is dropped).
func (p *Prefetcher) Heard(rel string) {
	if p.muted.Load() > 0 {
		return
	}
	select {
	case p.queue <- rel:
	default:
	}
}

// Mute drops every path heard until the returned function is called: the
// files a restore writes are no edits to read ahead for.
func (p *Prefetcher) Mute() (unmute func()) {
	p.muted.Add(1)
	return func() { p.muted.Add(-1) }
}

// Muted reports whether a Mute is in effect.
func (p *Prefetcher) Muted() bool { return p.muted.Load() > 0 }

// Hold stops the encoding ahead until the returned function is called: a
// save running meanwhile encodes what it stores itself, and the two would
// share the cores to do the same work.
func (p *Prefetcher) Hold() (release func()) {
	p.held.Add(1)
	return func() { p.held.Add(-1) }
}

// Start starts reading ahead for the paths heard; Close stops it.
func (p *Prefetcher) Start() {
	go p.run()
}

// Close stops the reading ahead and waits for it to end. The index and the
// store must stay open until it returns.
func (p *Prefetcher) Close() {
	p.once.Do(func() { close(p.stop) })
	<-p.done
}

// run reads ahead until Close. Each round takes every path queued and
// reads each directory's stat cache and tree once for all of them, in the
// order of their paths.
func (p *Prefetcher) run() {
	defer close(p.done)
	for {
		var first string
		select {
		case <-p.stop:
			return
		case first = <-p.queue:
		}
		round := map[string]map[string]bool{} // file names by directory; nil for a directory above one
		add := func(rel string) {
			dir, name := parentDir(rel), path.Base(rel)
			if round[dir] == nil {
				round[dir] = map[string]bool{}
			}
			round[dir][name] = true
			for dir != "" {
				dir = parentDir(dir)
				if _, ok := round[dir]; !ok {
					round[dir] = nil
				}
			}
		}
		add(first)
	drain:
		for {
			select {
			case rel := <-p.queue:
				add(rel)
			default:
				break drain
			}
		}
		for _, dir := range slices.Sorted(maps.Keys(round)) { // each directory after those above it
			select {
			case <-p.stop:
				return
			default:
			}
			p.readAhead(dir, round[dir])
		}
	}
}

// readAhead reads the stored tree of dir and the recorded versions of its
// named files, and prepares their new contents' delta records. A failure
// is left to the save, which reads the same and reports it.
func (p *Prefetcher) readAhead(dir string, names map[string]bool) {
	dc, ok, err := p.db.DirCache(dir)
	if err != nil || !ok {
		return
	}
	if _, err := p.db.SharedTree(dc.Tree); err != nil {
		return
	}
	for _, f := range dc.Entries {
		if !names[f.Name] || f.ID.IsZero() {
			continue
		}
		rel := path.Join(dir, f.Name)
		// Preparing reads the base as warming it would; only a file not
		// prepared has its base warmed on its own.
		prepared := p.prepare(rel, f)
		read := prepared
		if !prepared {
			read, _ = p.blobs.WarmBase(f.ID)
		}
		if read && p.warmed != nil {
			p.warmed(rel, f.ID, prepared)
		}
	}
}

// prepare encodes ahead the delta record of the file at rel against the
// version its stat cache entry f records, unless a save holds the
// encoding or the file still looks as f recorded it (a path heard before
// the save that captured it); it reports whether it did. A file it cannot
// read is left to the save.
func (p *Prefetcher) prepare(rel string, f index.CachedFile) bool {
	if p.held.Load() > 0 {
		return false
	}
	r, err := osfs.OpenRegular(filepath.Join(p.workspace, filepath.FromSlash(rel)))
	if err != nil {
		return false
	}
	defer r.Close()
	if looksRecorded(r.Opened(), f) {
		return false
	}
	done, err := p.blobs.PrepareVersion(r, f.ID)
	return done && err == nil
}

// looksRecorded reports whether a file whose open took stamp o looks as
// record c holds it, in every field the stamp gives.
func looksRecorded(o osfs.Stamp, c index.CachedFile) bool {
	return o.Size == c.Size && o.ModTime == c.MtimeNs &&
		(o.ChangeTime == 0 || o.ChangeTime == c.CtimeNs) && (o.Inode == 0 || o.Inode == c.Inode)
}
