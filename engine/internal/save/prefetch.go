package save

import (
	"maps"
	"path"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ckpt/ckpt/index"
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
//     it: the save stores their new trees as deltas against those.
//
// After an edit of a hundred source files these reads were a third of the
// save; the store's group cache and the index's tree memo then hold them
// for it. It is a head start only: it changes nothing in the store or the
// index, and a path it never hears of, drops, or reads too late costs the
// save exactly what it cost before. It reads on one goroutine, so it takes
// at most one core from the host.
type Prefetcher struct {
	db    *index.DB
	blobs *objects.Store
	queue chan string
	muted atomic.Int32
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
	// warmed, when set (by tests), is told of each file version read
	// ahead: the file's path and the version's id.
	warmed func(rel string, id objects.ID)
}

// NewPrefetcher returns a Prefetcher over the stat caches of db and the
// blobs they name; its paths are heard by Heard and read once Start runs.
func NewPrefetcher(db *index.DB, blobs *objects.Store, warmed func(rel string, id objects.ID)) *Prefetcher {
	return &Prefetcher{db: db, blobs: blobs, queue: make(chan string, prefetchQueue), stop: make(chan struct{}),
		done: make(chan struct{}), warmed: warmed}
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
// named files. A failure is left to the save, which reads the same and
// reports it.
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
		if read, _ := p.blobs.WarmBase(f.ID); read && p.warmed != nil {
			p.warmed(path.Join(dir, f.Name), f.ID)
		}
	}
}
