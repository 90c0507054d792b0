package engine

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"maps"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ckpt/ckpt/engine/remote"
	"github.com/ckpt/ckpt/internal/testbound"
	"github.com/ckpt/ckpt/internal/testtree"
	"github.com/ckpt/ckpt/objects"
)

// remoteCase is one kind of remote the sync tests run against.
type remoteCase struct {
	name string
	open func(t *testing.T) (Backend, string)
}

// remoteCases is file:// always, and the S3 service CKPT_TEST_S3 names
// (s3://bucket[/prefix], endpoint and credentials in the AWS_* variables)
// when it is set.
func remoteCases() []remoteCase {
	cases := []remoteCase{{"file", func(t *testing.T) (Backend, string) {
		dir := t.TempDir()
		b, err := remote.OpenDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b, remote.FileURL(dir)
	}}}
	if base := os.Getenv("CKPT_TEST_S3"); base != "" {
		cases = append(cases, remoteCase{"s3", func(t *testing.T) (Backend, string) {
			url := fmt.Sprintf("%s/ckpt-sync-%s", strings.TrimSuffix(base, "/"), rand.Text()[:12])
			b, err := remote.Open(context.Background(), url, remote.ConfigFromEnv(os.Getenv))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			return b, url
		}})
	}
	return cases
}

func eachRemote(t *testing.T, fn func(t *testing.T, open func(t *testing.T) (Backend, string))) {
	for _, rc := range remoteCases() {
		t.Run(rc.name, func(t *testing.T) { fn(t, rc.open) })
	}
}

// syncTree holds what a clone must reproduce: text, binary, a file large
// enough to be chunked (in a store of syncChunkThreshold), symlinks, modes
// and an empty directory.
func syncTree() testtree.Dir {
	// Twice syncChunkThreshold, so it is stored as several chunks.
	big := make([]byte, 2*syncChunkThreshold)
	mrand.NewChaCha8([32]byte{1, 2}).Read(big)
	return testtree.Dir{
		"README.md": testtree.File{Content: "hello\n"},
		"bin":       testtree.Dir{"run.sh": testtree.File{Content: "#!/bin/sh\necho hi\n", Mode: 0o755}},
		"data":      testtree.Dir{"blob.bin": testtree.File{Content: "\x00\x01\x02binary\xff\xfe"}, "big.dat": testtree.File{Content: string(big)}},
		"link":      testtree.Symlink{Target: "README.md"},
		"dangling":  testtree.Symlink{Target: "nowhere/at/all"},
		"empty":     testtree.Dir{},
		"src":       testtree.Dir{"a.go": testtree.File{Content: "package a\n"}, "b.go": testtree.File{Content: "package a // b\n"}},
	}
}

// syncChunkThreshold is the chunk threshold of the stores that save
// syncTree (newSyncFixture): a quarter of the default, so that its large
// file is chunked at 2 MiB instead of 5. The tests that push and clone it
// move its bytes several times each, at ten times the cost under the race
// detector.
const syncChunkThreshold = 1 << 20

// newSyncFixture is newFixture of tree (syncTree or more) opening the
// engine with opts and syncChunkThreshold, and with openByURL unless opts
// says how to open remotes.
func newSyncFixture(t *testing.T, tree testtree.Dir, opts Options) *fixture {
	t.Helper()
	opts.hooks.chunkThreshold = syncChunkThreshold
	if opts.OpenRemote == nil {
		opts.OpenRemote = openByURL // for the blobs a later pull leaves on a remote
	}
	return newFixtureOpts(t, tree, opts)
}

// pushFixture saves f's workspace, registers b as "origin" and pushes.
func pushAll(t *testing.T, f *fixture, b Backend, url string) *PushResult {
	t.Helper()
	ctx := context.Background()
	if _, ok, _ := f.e.db.Config(remoteKey("origin")); !ok {
		if err := f.e.AddRemote(ctx, "origin", url); err != nil {
			t.Fatal(err)
		}
	}
	res, err := f.e.Push(ctx, b, PushOptions{Remote: "origin"})
	if err != nil {
		t.Fatalf("push: %v", err)
	}
	return res
}

// pushedFixture saves syncTree as checkpoint msg and pushes it to b as "origin".
func pushedFixture(t *testing.T, b Backend, url, msg string) *fixture {
	t.Helper()
	f := newSyncFixture(t, syncTree(), Options{})
	f.save(msg)
	pushAll(t, f, b, url)
	return f
}

// cloneInto clones the default task of b into a new workspace and store,
// whose Engine opens the remote (openByURL) for the blobs the clone's
// restore did not bring.
func cloneInto(t *testing.T, b Backend, url string) (*fixture, *CloneResult, error) {
	t.Helper()
	g := newFixtureOpts(t, testtree.Dir{}, Options{OpenRemote: openByURL})
	res, err := g.e.Clone(context.Background(), b, CloneOptions{URL: url})
	return g, res, err
}

func TestCloneReproducesThePushedWorkspaceByteForByte(t *testing.T) {
	t.Parallel()
	eachRemote(t, func(t *testing.T, open func(*testing.T) (Backend, string)) {
		b, url := open(t)
		f := pushedFixture(t, b, url, "one")
		g, res, err := cloneInto(t, b, url)
		if err != nil {
			t.Fatal(err)
		}
		assertSameTree(t, f.read(), g.read())
		if res.Restore.Fetched.Blobs == 0 || res.Pull.Checkpoints != 1 {
			t.Fatalf("clone fetched %d blobs, imported %d checkpoints", res.Restore.Fetched.Blobs, res.Pull.Checkpoints)
		}
		if rep, err := g.e.Verify(context.Background(), VerifyOptions{}); err != nil {
			t.Fatalf("verify of the clone: %v (%+v)", err, rep)
		}
		// Records are copied as they are: a group once, however many of its
		// members the restore needed.
		if src, dst := sum(packFiles(t, f.store)), sum(packFiles(t, g.store)); dst > src+src/4 {
			t.Fatalf("the clone's packs hold %d bytes, the pushed store's %d", dst, src)
		}
		log, err := g.e.List(context.Background(), "")
		if err != nil || len(log.Checkpoints) != 1 || log.Checkpoints[0].ID != f.save("again").ID {
			t.Fatalf("clone's history %+v, %v", log, err)
		}
	})
}

func TestPullLeavesBlobsOnTheRemoteUntilACatNeedsThem(t *testing.T) {
	t.Parallel()
	b, url := remoteCases()[0].open(t)
	pushedFixture(t, b, url, "one")
	g := newFixture(t, testtree.Dir{})
	ctx := context.Background()
	if err := g.e.AddRemote(ctx, "origin", url); err != nil {
		t.Fatal(err)
	}
	if _, err := g.e.Pull(ctx, b, PullOptions{Remote: "origin"}); err != nil {
		t.Fatal(err)
	}
	if packs, _ := g.e.blobs.Packs(); len(packs) != 0 {
		t.Fatalf("pull stored %d packs; blobs should stay on the remote", len(packs))
	}
	if _, err := g.e.Verify(ctx, VerifyOptions{}); err != nil {
		t.Fatalf("verify after a pull: %v", err)
	}
	// A fresh Engine (another process) reaches the remote through OpenRemote.
	g.open(Options{OpenRemote: openByURL})
	checkCatOfA(t, g.e)
	if _, found, _ := g.e.db.Locator(blobID(t, g.e, "src/a.go")); !found {
		t.Fatal("the fetched blob was not stored locally")
	}
}

// openByURL is an Options.OpenRemote for the tests' unencrypted remotes
// (remoteCases), with this process's AWS_* settings.
func openByURL(ctx context.Context, r RemoteInfo) (Backend, error) {
	return remote.Open(ctx, r.URL, remote.ConfigFromEnv(os.Getenv))
}

// whoKey is the context key of the caller a test's OpenRemote records.
type whoKey struct{}

// closingBackend records that it was closed.
type closingBackend struct {
	Backend
	closed atomic.Bool
}

func (c *closingBackend) Close() error {
	c.closed.Store(true)
	return c.Backend.Close()
}

// The blobs a pull left on a remote are fetched through a backend opened
// for the call that needs them, with that call's context, and closed when
// its fetch ends: neither the Pull's backend nor one an earlier call
// opened serves a later call (which may come with other credentials).
func TestEachCallFetchesThroughABackendOpenedWithItsContext(t *testing.T) {
	t.Parallel()
	b, url := remoteCases()[0].open(t)
	pushedFixture(t, b, url, "one")
	var opened []*closingBackend
	var callers []string
	openRemote := func(ctx context.Context, r RemoteInfo) (Backend, error) {
		rb, err := openByURL(ctx, r)
		if err != nil {
			return nil, err
		}
		who, _ := ctx.Value(whoKey{}).(string)
		callers = append(callers, who)
		opened = append(opened, &closingBackend{Backend: rb})
		return opened[len(opened)-1], nil
	}
	g := newFixtureOpts(t, testtree.Dir{}, Options{OpenRemote: openRemote})
	ctx := context.Background()
	if err := g.e.AddRemote(ctx, "origin", url); err != nil {
		t.Fatal(err)
	}
	pulled := &countingBackend{Backend: b}
	if _, err := g.e.Pull(ctx, pulled, PullOptions{Remote: "origin"}); err != nil {
		t.Fatal(err)
	}
	for i, who := range []string{"first", "second"} {
		rc, _, err := g.e.Cat(context.WithValue(ctx, whoKey{}, who), "", "HEAD", []string{"src/a.go", "src/b.go"}[i])
		if err != nil {
			t.Fatalf("cat of the %s: %v", who, err)
		}
		rc.Close()
		closed := 0
		for _, o := range opened {
			if o.closed.Load() {
				closed++
			}
		}
		if len(opened) != i+1 || callers[i] != who || closed != i+1 {
			t.Fatalf("after the %s cat: opened for %q, %d of them closed; want one more, for it, closed", who, callers, closed)
		}
	}
	if n := pulled.ranges.Load(); n != 0 {
		t.Fatalf("the pull's backend served %d reads after the pull", n)
	}
	// A read-only engine fetches a diff's sides as they are read, with
	// the diff's context, even once that context is done.
	g.open(Options{ReadOnly: true, OpenRemote: openRemote})
	diffCtx, done := context.WithCancel(context.WithValue(ctx, whoKey{}, "diff"))
	res, err := g.e.Diff(diffCtx, "HEAD", WorkspaceRef, DiffOptions{Paths: []string{"README.md"}})
	done()
	if err != nil || len(res.Changes) != 1 {
		t.Fatalf("diff of README.md: %+v, %v", res, err)
	}
	if b, err := res.Content(res.Changes[0], false); err != nil || string(b) != "hello\n" {
		t.Fatalf("README.md before: %q, %v", b, err)
	}
	if len(callers) != 3 || callers[2] != "diff" {
		t.Fatalf("remote opened for %q; want the diff's context last", callers)
	}
}

// checkCatOfA checks that e's cat of src/a.go at HEAD gives syncTree's
// content.
func checkCatOfA(t *testing.T, e *Engine) {
	t.Helper()
	rc, _, err := e.Cat(context.Background(), "", "HEAD", "src/a.go")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if string(got) != "package a\n" {
		t.Fatalf("cat = %q", got)
	}
}

func blobID(t *testing.T, e *Engine, p string) [32]byte {
	t.Helper()
	ents, err := e.Ls(context.Background(), "", "HEAD", filepath.Dir(p))
	if err != nil {
		t.Fatal(err)
	}
	for _, ent := range ents {
		if ent.Path == p {
			return ent.ID
		}
	}
	t.Fatalf("%s not in HEAD", p)
	return [32]byte{}
}

// countingBackend counts Puts, and the bytes of those that succeed, and
// can fail the failAt-th one (1-based); it counts ranged reads too.
type countingBackend struct {
	Backend
	puts   atomic.Int64
	bytes  atomic.Int64
	failAt int64
	ranges atomic.Int64
}

func (c *countingBackend) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	c.ranges.Add(1)
	return c.Backend.GetRange(ctx, key, off, n)
}

var errInjected = errors.New("injected put failure")

func (c *countingBackend) Put(ctx context.Context, key string, r io.Reader, size int64, cond remote.Condition) (string, error) {
	if n := c.puts.Add(1); n == c.failAt {
		return "", errInjected
	}
	etag, err := c.Backend.Put(ctx, key, r, size, cond)
	if err == nil {
		c.bytes.Add(size)
	}
	return etag, err
}

func TestIncrementalPushUploadsOnlyTheNewData(t *testing.T) {
	t.Parallel()
	eachRemote(t, func(t *testing.T, open func(*testing.T) (Backend, string)) {
		b, url := open(t)
		f := pushedFixture(t, b, url, "one")
		f.write("src/a.go", "package a // edited\n")
		f.save("two")
		cb := &countingBackend{Backend: b}
		res := pushAll(t, f, cb, url)
		// One data object (the edited blob), one segment, one head.
		if got := cb.puts.Load(); got != 3 || res.Checkpoints != 1 {
			t.Fatalf("incremental push made %d puts for %d checkpoints, want 3 for 1", got, res.Checkpoints)
		}
		if got := cb.bytes.Load(); got > 8<<10 {
			t.Fatalf("incremental push uploaded %d bytes", got)
		}
		cb.puts.Store(0)
		if res := pushAll(t, f, cb, url); !res.UpToDate || cb.puts.Load() != 0 {
			t.Fatalf("a second push: %+v with %d puts", res, cb.puts.Load())
		}
		g, _, err := cloneInto(t, b, url)
		if err != nil {
			t.Fatal(err)
		}
		assertSameTree(t, f.read(), g.read())
	})
}

func TestPushCutShortAtEveryPutCompletesWhenRun(t *testing.T) {
	t.Parallel()
	eachRemote(t, testPushCutShort)
}

func testPushCutShort(t *testing.T, open func(*testing.T) (Backend, string)) {
	b, url := open(t)
	tree := syncTree()
	// 5.6 MiB of incompressible files in group records of about 1 MiB, each
	// a data object of its own (syncObjectSize): with syncTree's chunked
	// file, the small files, the segment and the head, at least nine puts
	// (9 to 11: which files share a record depends on the order the save's
	// workers finish them; every push below starts from a copy of this one
	// store, so it makes the probe's puts).
	for i := range 56 {
		b := make([]byte, 100<<10)
		mrand.NewChaCha8([32]byte{byte(i)}).Read(b)
		tree["src"].(testtree.Dir)[fmt.Sprintf("f%02d.bin", i)] = testtree.File{Content: string(b)}
	}
	small := Options{hooks: testHooks{syncObjectSize: 256 << 10, chunkThreshold: syncChunkThreshold}}
	// One save, whose store each push below starts from a copy of, on the
	// one workspace (which no push changes): every cut push has the
	// probe's records, so its data objects and puts.
	template := newSyncFixture(t, tree, small)
	template.save("one")
	template.e.Close()
	probe := storeCopy(t, template, small)
	cb := &countingBackend{Backend: b}
	pushAll(t, probe, cb, url)
	total, totalBytes := cb.puts.Load(), cb.bytes.Load()
	if total < 9 {
		t.Fatalf("only %d puts", total)
	}
	saved := template.read() // what every clone must reproduce
	for _, n := range cutPoints(total) {
		t.Run(fmt.Sprint("fail put ", n), func(t *testing.T) {
			t.Parallel()
			b, url := open(t)
			f := storeCopy(t, template, small)
			cb := &countingBackend{Backend: b, failAt: n}
			ctx := context.Background()
			if err := f.e.AddRemote(ctx, "origin", url); err != nil {
				t.Fatal(err)
			}
			if _, err := f.e.Push(ctx, cb, PushOptions{Remote: "origin"}); !errors.Is(err, errInjected) {
				t.Fatalf("push with put %d failing: %v", n, err)
			}
			rerun := &countingBackend{Backend: b}
			pushAll(t, f, rerun, url)
			// Nothing is uploaded twice: the cut push and its rerun send
			// what one whole push sends (give or take the metadata, whose
			// checkpoint times and durations differ between the stores).
			if got := cb.bytes.Load() + rerun.bytes.Load(); got > totalBytes+4<<10 {
				t.Fatalf("cut push and rerun uploaded %d + %d bytes, one push %d", cb.bytes.Load(), rerun.bytes.Load(), totalBytes)
			}
			g, _, err := cloneInto(t, b, url)
			if err != nil {
				t.Fatal(err)
			}
			assertSameTree(t, saved, g.read())
			if _, err := g.e.Verify(ctx, VerifyOptions{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// storeCopy opens a copy of the closed store of template, on template's
// workspace, with opts.
func storeCopy(t *testing.T, template *fixture, opts Options) *fixture {
	t.Helper()
	f := &fixture{t: t, ws: template.ws, store: filepath.Join(t.TempDir(), "store")}
	copyDir(t, template.store, f.store)
	f.open(opts)
	return f
}

// cutPoints returns the puts, numbered from 1 to total, at which the cut
// push test fails one: every put when the long tests are on, otherwise the
// first two, one from the middle and the last three (the last data object,
// the segment and the head), where the push moves from one kind of object
// to the next.
func cutPoints(total int64) []int64 {
	if testbound.LongTests() {
		all := make([]int64, total)
		for i := range all {
			all[i] = int64(i) + 1
		}
		return all
	}
	var points []int64
	for _, n := range []int64{1, 2, total / 2, total - 2, total - 1, total} {
		if n >= 1 && !slices.Contains(points, n) {
			points = append(points, n)
		}
	}
	return points
}

func TestConcurrentPushersOfOneTaskKeepBothHistories(t *testing.T) {
	t.Parallel()
	eachRemote(t, func(t *testing.T, open func(*testing.T) (Backend, string)) {
		b, url := open(t)
		a := pushedFixture(t, b, url, "base")
		c, _, err := cloneInto(t, b, url)
		if err != nil {
			t.Fatal(err)
		}
		a.write("src/a.go", "package a // from a\n")
		a.save("a's work")
		c.write("src/a.go", "package a // from c\n")
		c.save("c's work")
		var wg sync.WaitGroup
		results := make([]*PushResult, 2)
		errs := make([]error, 2)
		for i, f := range []*fixture{a, c} {
			wg.Go(func() { results[i], errs[i] = f.e.Push(context.Background(), b, PushOptions{Remote: "origin"}) })
		}
		wg.Wait()
		if errs[0] != nil || errs[1] != nil {
			t.Fatalf("pushes: %v, %v", errs[0], errs[1])
		}
		forks := 0
		var forked string
		for _, r := range results {
			if r.Forked != "" {
				forks++
				forked = r.Forked
			}
		}
		if forks != 1 {
			t.Fatalf("want exactly one fork, got %+v %+v", results[0], results[1])
		}
		// Both histories are on the remote: the task, and the fork.
		ctx := context.Background()
		for _, task := range []string{DefaultTask, forked} {
			h := newFixture(t, testtree.Dir{})
			res, err := h.e.Clone(ctx, b, CloneOptions{URL: url, Task: task})
			if err != nil {
				t.Fatalf("clone %s: %v", task, err)
			}
			if res.Pull.Checkpoints != 2 {
				t.Fatalf("task %s holds %d checkpoints, want 2", task, res.Pull.Checkpoints)
			}
		}
		// The store that lost the race cannot pull the task over its own
		// work; once it drops its side (kept as the fork), it can.
		loser := a
		if results[1].Forked != "" {
			loser = c
		}
		if _, err := loser.e.Pull(ctx, b, PullOptions{Remote: "origin"}); !errors.Is(err, ErrDiverged) {
			t.Fatalf("pull into the forked store: %v, want ErrDiverged", err)
		}
		if _, err := loser.e.Drop(ctx, DefaultTask); err != nil {
			t.Fatal(err)
		}
		pr, err := loser.e.Pull(ctx, b, PullOptions{Remote: "origin"})
		if err != nil || pr.Checkpoints != 2 || !pr.Moved {
			t.Fatalf("pull after dropping the forked task: %+v, %v", pr, err)
		}
		if _, err := loser.e.Restore(ctx, "HEAD", RestoreOptions{}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestCorruptRemoteObjectsAreDetectedAndNothingIsImported(t *testing.T) {
	t.Parallel()
	eachRemote(t, func(t *testing.T, open func(*testing.T) (Backend, string)) {
		for _, prefix := range []string{"data/", "meta/", "heads/"} {
			t.Run(strings.TrimSuffix(prefix, "/"), func(t *testing.T) {
				t.Parallel()
				b, url := open(t)
				pushedFixture(t, b, url, "one")
				damage(t, b, prefix)
				g, _, err := cloneInto(t, b, url)
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("clone from a remote with a damaged %s object: %v, want ErrCorrupt", prefix, err)
				}
				if prefix != "data/" {
					if tasks, _ := g.e.db.Tasks(); len(tasks) != 0 {
						t.Fatalf("a failed pull imported tasks %v", tasks)
					}
				}
			})
		}
	})
}

// damage flips a byte in the middle of the largest object under prefix
// (for data, the one holding most records).
func damage(t *testing.T, b Backend, prefix string) {
	t.Helper()
	key, data := largestObject(t, b, prefix)
	data[len(data)/2] ^= 0x40
	if _, err := b.Put(context.Background(), key, bytes.NewReader(data), int64(len(data)), remote.Condition{}); err != nil {
		t.Fatal(err)
	}
}

func TestPushAfterLocalGCDroppedTheRemoteTipIsNoFork(t *testing.T) {
	t.Parallel()
	b, url := remoteCases()[0].open(t)
	f := newSyncFixture(t, syncTree(), Options{})
	f.save("one")
	f.write("src/a.go", "package a // two\n")
	f.save("two")
	pushAll(t, f, b, url)
	f.write("src/a.go", "package a // three\n")
	f.save("three")
	ctx := context.Background()
	if _, err := f.e.GC(ctx, GCOptions{Policy: &RetentionPolicy{KeepLast: 1}}); err != nil {
		t.Fatal(err)
	}
	res := pushAll(t, f, b, url)
	if res.Forked != "" || res.Checkpoints != 1 {
		t.Fatalf("push after gc: %+v", res)
	}
	g, _, err := cloneInto(t, b, url)
	if err != nil {
		t.Fatal(err)
	}
	assertSameTree(t, f.read(), g.read())
}

func TestDiffAfterPullFetchesTheChangedBlobs(t *testing.T) {
	t.Parallel()
	b, url := remoteCases()[0].open(t)
	f := newSyncFixture(t, syncTree(), Options{})
	f.save("one")
	f.write("src/a.go", "package a // two\n")
	f.save("two")
	pushAll(t, f, b, url)
	g := newFixtureOpts(t, testtree.Dir{}, Options{OpenRemote: openByURL})
	ctx := context.Background()
	if err := g.e.AddRemote(ctx, "origin", url); err != nil {
		t.Fatal(err)
	}
	if _, err := g.e.Pull(ctx, b, PullOptions{Remote: "origin"}); err != nil {
		t.Fatal(err)
	}
	d, err := g.e.Diff(ctx, "@1", "@2", DiffOptions{})
	if err != nil || len(d.Changes) != 1 {
		t.Fatalf("diff after pull: %+v, %v", d, err)
	}
	after, err := d.Content(d.Changes[0], true)
	if err != nil || string(after) != "package a // two\n" {
		t.Fatalf("after = %q, %v", after, err)
	}
	if _, found, _ := g.e.db.Locator(objects.ID(d.Changes[0].Before.ID)); !found {
		t.Fatal("the diff's blobs were not fetched into the store")
	}
}

// A push right after a first save that deferred compression uploads the
// packs compressed, not as the save left them on disk, and leaves none
// deferred; a clone of the remote reproduces the workspace.
func TestPushCompressesDeferredPacksFirst(t *testing.T) {
	t.Parallel()
	tree := testtree.Dir{}
	var raw int64
	for i := range 200 {
		text := strings.Repeat(fmt.Sprintf("line %d of a source file that compresses well\n", i%7), 40)
		tree[fmt.Sprintf("f%03d.txt", i)] = testtree.File{Content: text}
		raw += int64(len(text))
	}
	eachRemote(t, func(t *testing.T, open func(*testing.T) (Backend, string)) {
		b, url := open(t)
		f := newSyncFixture(t, tree, Options{DeferCompression: true})
		f.save("one")
		if _, packs, err := f.e.Deferred(); err != nil || packs == 0 {
			t.Fatalf("the first save deferred %d packs (%v); the test needs some", packs, err)
		}
		cb := &countingBackend{Backend: b}
		pushAll(t, f, cb, url)
		if got := cb.bytes.Load(); got*4 > raw {
			t.Fatalf("the push uploaded %d bytes of %d raw", got, raw)
		}
		if _, packs, err := f.e.Deferred(); err != nil || packs != 0 {
			t.Fatalf("%d packs still deferred after the push (%v)", packs, err)
		}
		g, _, err := cloneInto(t, b, url)
		if err != nil {
			t.Fatal(err)
		}
		assertSameTree(t, f.read(), g.read())
	})
}

// A blob that two remotes hold is read from the first of them only, even
// by a read-only engine, which keeps nothing of what it fetches (it used
// to read it from every remote that held it).
func TestABlobTwoRemotesHoldIsFetchedFromOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, urlA := remoteCases()[0].open(t)
	f := pushedFixture(t, a, urlA, "one")
	b, urlB := remoteCases()[0].open(t)
	if err := f.e.AddRemote(ctx, "second", urlB); err != nil {
		t.Fatal(err)
	}
	if _, err := f.e.Push(ctx, b, PushOptions{Remote: "second"}); err != nil {
		t.Fatal(err)
	}
	g := newFixture(t, testtree.Dir{})
	for _, r := range []struct {
		name, url string
		b         Backend
	}{{"origin", urlA, a}, {"second", urlB, b}} {
		if err := g.e.AddRemote(ctx, r.name, r.url); err != nil {
			t.Fatal(err)
		}
		if _, err := g.e.Pull(ctx, r.b, PullOptions{Remote: r.name}); err != nil {
			t.Fatal(err)
		}
	}
	counted := map[string]*countingBackend{}
	g.open(Options{ReadOnly: true, OpenRemote: func(ctx context.Context, r RemoteInfo) (Backend, error) {
		b, err := remote.Open(ctx, r.URL, remote.Config{})
		counted[r.Name] = &countingBackend{Backend: b}
		return counted[r.Name], err
	}})
	checkCatOfA(t, g.e)
	reads := func(name string) int64 {
		if c := counted[name]; c != nil {
			return c.ranges.Load()
		}
		return 0 // never opened
	}
	if o, s := reads("origin"), reads("second"); o != 1 || s != 0 {
		t.Fatalf("ranged reads: %d from origin, %d from second; want 1 and 0", o, s)
	}
}

// Wanted tells where the store holds the blobs it holds, from the one
// pass that finds what it lacks: a restore looks up no blob twice.
func TestWantedLocatesTheBlobsTheStoreHolds(t *testing.T) {
	t.Parallel()
	eachRemote(t, func(t *testing.T, open func(*testing.T) (Backend, string)) {
		b, url := open(t)
		f := pushedFixture(t, b, url, "one")
		want := map[objects.ID]objects.Locator{}
		var ids []objects.ID
		err := f.e.db.EachLocator(func(id objects.ID, loc objects.Locator) error {
			want[id] = loc
			ids = append(ids, id)
			return nil
		})
		if err != nil || len(ids) == 0 {
			t.Fatalf("the store's locators: %d, %v", len(ids), err)
		}
		foreign := objects.Sum([]byte("on no remote"))
		got := map[objects.ID]objects.Locator{}
		wants, missing, err := f.e.syncer("origin", nil, nil).Wanted(append(ids, foreign, ids[0]), func(id objects.ID, loc objects.Locator) {
			if _, twice := got[id]; twice {
				t.Errorf("blob %s located twice", id.Short())
			}
			got[id] = loc
		})
		if err != nil || wants.Len() != 0 || len(missing) != 1 || missing[0] != foreign {
			t.Fatalf("Wanted: %d wanted, missing %v, %v; want only the foreign id missing", wants.Len(), missing, err)
		}
		if !maps.Equal(got, want) {
			t.Fatalf("Wanted located %d blobs; the store holds %d, or at other places", len(got), len(want))
		}
	})
}
