package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ckpt/ckpt/engine/internal/restore"
	"github.com/ckpt/ckpt/engine/remote"
	"github.com/ckpt/ckpt/internal/testtree"
	"github.com/ckpt/ckpt/objects"
)

// failingReads fails every ranged read while failing is set, but those
// of object spare when set: a network that goes away once a pull has its
// metadata (or once a clone has its first data object: then the other
// reads fail only after a read of spare has been read to its end).
type failingReads struct {
	Backend
	failing atomic.Bool
	spare   string
	spared  chan struct{} // closed once a read of spare is closed
	once    sync.Once
}

// failingAfter is a failingReads, failing, that lets the reads of spare
// through and fails the others once one of them has been read.
func failingAfter(b Backend, spare string) *failingReads {
	f := &failingReads{Backend: b, spare: spare, spared: make(chan struct{})}
	f.failing.Store(true)
	return f
}

func (f *failingReads) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	if !f.failing.Load() {
		return f.Backend.GetRange(ctx, key, off, n)
	}
	if key != f.spare {
		if f.spared != nil {
			select {
			case <-f.spared:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return nil, errInjected
	}
	rc, err := f.Backend.GetRange(ctx, key, off, n)
	if err != nil {
		return nil, err
	}
	return onClose{rc, func() { f.once.Do(func() { close(f.spared) }) }}, nil
}

// onClose is a ReadCloser that calls closed once it is closed.
type onClose struct {
	io.ReadCloser
	closed func()
}

func (o onClose) Close() error {
	defer o.closed()
	return o.ReadCloser.Close()
}

func TestACloneThatFailedFetchingBlobsFinishesWhenRunAgain(t *testing.T) {
	t.Parallel()
	eachRemote(t, func(t *testing.T, open func(*testing.T) (Backend, string)) {
		ctx := context.Background()
		b, url := open(t)
		f := newFixture(t, smallSyncTree())
		f.save("one")
		pushAll(t, f, b, url)
		fb := &failingReads{Backend: b}
		fb.failing.Store(true)
		g := newFixture(t, testtree.Dir{})
		opts := CloneOptions{URL: url}
		_, err := g.e.Clone(ctx, fb, opts)
		if !errors.Is(err, errInjected) || !errors.Is(err, ErrUnfinishedClone) {
			t.Fatalf("clone with the blobs unreachable: %v, want the injected failure and ErrUnfinishedClone", err)
		}
		if tasks, _ := g.e.db.Tasks(); len(tasks) != 1 || len(g.read()) != 0 {
			t.Fatalf("the failed clone left tasks %v and workspace %v; want the pulled task and no files", tasks, g.read())
		}
		for what, other := range map[string]CloneOptions{
			"another URL":  {URL: url + "/other"},
			"another task": {URL: url, Task: "other"},
			"another name": {URL: url, Remote: "upstream"},
		} {
			if _, err := g.e.Clone(ctx, b, other); !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), "unfinished clone") {
				t.Fatalf("a clone with %s into the unfinished one: %v, want ErrBadRequest naming it", what, err)
			}
		}
		fb.failing.Store(false)
		res, err := g.e.Clone(ctx, fb, opts)
		if err != nil {
			t.Fatalf("the same clone run again: %v", err)
		}
		assertSameTree(t, f.read(), g.read())
		// The first run failed while its restore wrote: the second settles
		// that restore, fetching the blobs, before it pulls.
		resumed := res.resumed()
		if resumed == nil || resumed.Fetched.Blobs == 0 || res.Traffic.BytesDown < resumed.Fetched.Bytes || res.Pull.Head != f.save("again").ID {
			t.Fatalf("the finished clone: %+v, resumed %+v", res, res.Resumed)
		}
		if _, err := g.e.Clone(ctx, b, opts); !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), "new store") {
			t.Fatalf("a clone into a finished clone: %v, want ErrBadRequest", err)
		}
	})
}

// streamTree is a workspace whose blobs a push spreads over several data
// objects (4 MiB of incompressible files in group records of about 1 MiB,
// each a data object of its own with syncObjectSize 256 KiB), with one
// content in four files and a symlink.
func streamTree() testtree.Dir {
	d := testtree.Dir{"link": testtree.Symlink{Target: "d0/f00.bin"}}
	same := make([]byte, 3<<10)
	mrand.NewChaCha8([32]byte{9}).Read(same)
	for i := range 40 {
		b := make([]byte, 100<<10)
		mrand.NewChaCha8([32]byte{byte(i)}).Read(b)
		dir := fmt.Sprintf("d%d", i%4)
		if d[dir] == nil {
			d[dir] = testtree.Dir{"same.bin": testtree.File{Content: string(same)}}
		}
		d[dir].(testtree.Dir)[fmt.Sprintf("f%02d.bin", i)] = testtree.File{Content: string(b)}
	}
	return d
}

func TestAFetchKeepsWhatItStoredBeforeItEnds(t *testing.T) {
	t.Parallel()
	eachRemote(t, func(t *testing.T, open func(*testing.T) (Backend, string)) {
		b, url := open(t)
		f := pushedStreamTree(t, b, url)
		// Every data object but the first waits until the test has looked.
		looked := make(chan struct{})
		gated := &gatedReads{Backend: b, first: firstDataKey(t, b), opened: looked}
		opts := streamOptions(0)
		opts.hooks.fetchKeepEvery = 1
		g := newFixtureOpts(t, testtree.Dir{}, opts)
		var once sync.Once
		fetched := make(chan struct{}) // the first data object's records are stored
		progress := func(p SyncProgress) {
			if p.Phase == "fetch" && p.Done > 0 {
				once.Do(func() { close(fetched) })
			}
		}
		done := make(chan error, 1)
		go func() {
			_, err := g.e.Clone(context.Background(), gated, CloneOptions{URL: url, Progress: progress})
			done <- err
		}()
		select {
		case <-fetched:
		case err := <-done:
			t.Fatalf("the clone ended before the test looked: %v", err)
		}
		// The fetch is still under way, and what it stored is committed: a
		// process killed now would keep it.
		recorded := recordedBlobs(t, g.e, "origin")
		lacking, err := g.e.remoteOnly(context.Background(), "origin")
		close(looked)
		if err != nil || lacking == 0 || lacking >= recorded {
			t.Fatalf("while the fetch runs, the store lacks %d of the remote's %d blobs (%v); want the first data object's committed", lacking, recorded, err)
		}
		if err := <-done; err != nil {
			t.Fatalf("the clone: %v", err)
		}
		assertSameTree(t, f.read(), g.read())
	})
}

// readsThenFails lets the first left ranged reads of data objects through
// and fails every later one.
type readsThenFails struct {
	Backend
	left atomic.Int64
}

func (r *readsThenFails) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	if strings.HasPrefix(key, "data/") && r.left.Add(-1) < 0 {
		return nil, errInjected
	}
	return r.Backend.GetRange(ctx, key, off, n)
}

func TestAFetchCutOffKeepsNoChunkedFileWithoutItsChunks(t *testing.T) {
	t.Parallel()
	eachRemote(t, func(t *testing.T, open func(*testing.T) (Backend, string)) {
		ctx := context.Background()
		b, url := open(t)
		f := pushedFixture(t, b, url, "one") // data/big.dat is chunked
		g := newFixtureOpts(t, testtree.Dir{}, Options{hooks: testHooks{fetchKeepEvery: 1}})
		// The first read brings the chunk list, the rest fail: the fetch
		// commits after each record it stores, and when it fails.
		cut := &readsThenFails{Backend: b}
		cut.left.Store(1)
		if _, err := g.e.Clone(ctx, cut, CloneOptions{URL: url}); !errors.Is(err, errInjected) {
			t.Fatalf("a clone whose reads fail after the first: %v, want the failure", err)
		}
		err := g.e.db.EachLocator(func(id objects.ID, loc objects.Locator) error {
			if loc.Chunked() {
				return fmt.Errorf("the cut-off fetch committed chunked blob %s without its chunks", id.Short())
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.e.Clone(ctx, b, CloneOptions{URL: url}); err != nil {
			t.Fatalf("the same clone run again: %v", err)
		}
		assertSameTree(t, f.read(), g.read())
	})
}

// recordedBlobs counts the blobs e's record of remote name places there.
func recordedBlobs(t *testing.T, e *Engine, name string) int {
	t.Helper()
	n := 0
	prefix := "sync/" + name + "/b/"
	err := e.db.EachConfig(prefix, func(key, _ string) error {
		if len(key) == len(prefix)+objects.IDSize {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// pushedStreamTree saves streamTree and pushes it to b in data objects
// of 256 KiB.
func pushedStreamTree(t *testing.T, b Backend, url string) *fixture {
	t.Helper()
	f := newFixtureOpts(t, streamTree(), streamOptions(0))
	f.save("one")
	pushAll(t, f, b, url)
	return f
}

// streamOptions make a push write data objects of 256 KiB, and a clone's
// fetch hold at most held bytes for the writes that have not read them.
func streamOptions(held int64) Options {
	return Options{hooks: testHooks{syncObjectSize: 256 << 10, arrivalsHeld: held}}
}

// firstDataKey is the data object a fetch of every blob of b reads first:
// the fetch reads them in the order of their names.
func firstDataKey(t *testing.T, b Backend) string {
	t.Helper()
	page, err := b.List(context.Background(), "data/", "", 0)
	if err != nil || len(page.Objects) < 4 {
		t.Fatalf("list data objects: %v, %d objects; want several", err, len(page.Objects))
	}
	first := page.Objects[0].Key
	for _, o := range page.Objects {
		first = min(first, o.Key)
	}
	return first
}

// gatedReads holds each ranged read of a data object other than first
// until opened is closed.
type gatedReads struct {
	Backend
	first  string
	opened chan struct{}
}

func (g *gatedReads) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	if strings.HasPrefix(key, "data/") && key != g.first {
		select {
		case <-g.opened:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Minute): // a deadlock: fail rather than hang
			return nil, errors.New("no file was written while the fetch waited for it to be")
		}
	}
	return g.Backend.GetRange(ctx, key, off, n)
}

// firstWrite closes opened at the restore's first file creation.
type firstWrite struct {
	restore.FS
	once   *sync.Once
	opened chan struct{}
}

func (f firstWrite) Create(rel string) (restore.TempFile, error) {
	f.once.Do(func() { close(f.opened) })
	return f.FS.Create(rel)
}

func TestACloneWritesFilesWhileItFetches(t *testing.T) {
	t.Parallel()
	eachRemote(t, func(t *testing.T, open func(*testing.T) (Backend, string)) {
		b, url := open(t)
		f := pushedStreamTree(t, b, url)
		opened := make(chan struct{})
		gated := &gatedReads{Backend: b, first: firstDataKey(t, b), opened: opened}
		opts := streamOptions(1) // the fetch waits for the writes whenever it holds anything
		opts.hooks.wrapRestoreFS = func(fsys restore.FS) restore.FS {
			return firstWrite{FS: fsys, once: &sync.Once{}, opened: opened}
		}
		g := newFixtureOpts(t, testtree.Dir{}, opts)
		res, err := g.e.Clone(context.Background(), gated, CloneOptions{URL: url})
		if err != nil {
			t.Fatalf("a clone whose later data objects come only once a file is written: %v", err)
		}
		assertSameTree(t, f.read(), g.read())
		if res.Restore.Fetched.Blobs == 0 || res.Traffic.BytesDown < res.Restore.Fetched.Bytes {
			t.Fatalf("the clone's fetch: %+v, traffic %+v", res.Restore.Fetched, res.Traffic)
		}
		// Every blob is in the new store: nothing is left to fetch.
		if n, err := g.e.remoteOnly(context.Background(), "origin"); err != nil || n != 0 {
			t.Fatalf("the clone's store lacks %d blobs (%v)", n, err)
		}
	})
}

// cutOffClone pushes streamTree to b and clones it into a new store
// through a backend that fails every read after the first data object's:
// the clone stops while it writes. It returns the pushed workspace, the
// clone and the clone's options.
func cutOffClone(t *testing.T, b Backend, url string) (f, g *fixture, opts CloneOptions) {
	t.Helper()
	f = pushedStreamTree(t, b, url)
	g = newFixtureOpts(t, testtree.Dir{}, streamOptions(1))
	opts = CloneOptions{URL: url}
	_, err := g.e.Clone(context.Background(), failingAfter(b, firstDataKey(t, b)), opts)
	if !errors.Is(err, errInjected) || !errors.Is(err, ErrUnfinishedClone) {
		t.Fatalf("a clone whose fetch fails after its first data object: %v, want the failure and ErrUnfinishedClone", err)
	}
	return f, g, opts
}

func TestACloneCutOffWhileItWritesFinishesWhenRunAgain(t *testing.T) {
	t.Parallel()
	eachRemote(t, func(t *testing.T, open func(*testing.T) (Backend, string)) {
		ctx := context.Background()
		b, url := open(t)
		f, g, opts := cutOffClone(t, b, url)
		if g.e.pending == nil {
			t.Fatal("the cut-off clone left no pending restore")
		}
		// The blobs of the data object read before the failure are kept,
		// those of the files the cut-off run put in place among them (the
		// rerun does not write those again).
		lacking, err := g.e.remoteOnly(ctx, "origin")
		if err != nil || lacking == 0 || lacking >= recordedBlobs(t, g.e, "origin") {
			t.Fatalf("the cut-off clone's store lacks %d blobs (%v); want some of the remote's %d kept", lacking, err, recordedBlobs(t, g.e, "origin"))
		}
		res, err := g.e.Clone(ctx, b, opts)
		if err != nil {
			t.Fatalf("the same clone run again: %v", err)
		}
		assertSameTree(t, f.read(), g.read())
		if r := res.resumed(); r == nil || r.Fetched.Blobs == 0 || r.Fetched.Blobs > lacking {
			t.Fatalf("the rerun settled %+v; want the cut-off restore completed, fetching at most the %d blobs the store lacked", res.Resumed, lacking)
		}
		if res.Restore != res.resumed() {
			t.Fatalf("the rerun restored the head again (%+v) after completing the cut-off restore of it", res.Restore)
		}
		if n, err := g.e.remoteOnly(ctx, "origin"); err != nil || n != 0 {
			t.Fatalf("the finished clone's store lacks %d blobs (%v)", n, err)
		}
		if rep, err := g.e.Verify(ctx, VerifyOptions{}); err != nil || !rep.OK() {
			t.Fatalf("verify the finished clone's store: %v %+v", err, rep)
		}
	})
}

// failingGets fails every whole-object read: a pull (which reads the
// remote's head whole) fails, a fetch (ranged reads) goes through.
type failingGets struct{ Backend }

func (failingGets) Get(context.Context, string) (io.ReadCloser, remote.ObjectInfo, error) {
	return nil, remote.ObjectInfo{}, errInjected
}

func TestACloneThatFailsAfterSettlingReturnsTheSettledRestore(t *testing.T) {
	t.Parallel()
	eachRemote(t, func(t *testing.T, open func(*testing.T) (Backend, string)) {
		ctx := context.Background()
		b, url := open(t)
		f, g, opts := cutOffClone(t, b, url)
		res, err := g.e.Clone(ctx, failingGets{b}, opts)
		if !errors.Is(err, errInjected) || !errors.Is(err, ErrUnfinishedClone) {
			t.Fatalf("a rerun whose pull fails: %v, want the failure and ErrUnfinishedClone", err)
		}
		if res == nil || res.resumed() == nil || res.Pull != nil || res.Restore != nil {
			t.Fatalf("the failed rerun returned %+v; want only the restore it settled", res)
		}
		assertSameTree(t, f.read(), g.read())
		if res, err = g.e.Clone(ctx, b, opts); err != nil || res.Resumed != nil || res.Restore.Fetched.Blobs != 0 {
			t.Fatalf("the clone run a third time: %+v, %v; want it finished with nothing to settle or fetch", res, err)
		}
	})
}
