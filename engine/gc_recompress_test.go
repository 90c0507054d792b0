package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ckpt/ckpt/internal/testbound"
	"github.com/ckpt/ckpt/internal/testtree"
)

// TestRecompressShrinksADeferredFirstSave saves a tree of source-like text
// with DeferCompression: the first save stores it uncompressed and marks
// its packs, a second save compresses as it writes, Recompress rewrites the
// marked packs into less than half their bytes and drops no checkpoint,
// both checkpoints restore byte-exact, the store verifies, and a second
// Recompress finds nothing to do. The tree has 3 directories, 8 with the
// long tests.
func TestRecompressShrinksADeferredFirstSave(t *testing.T) {
	t.Parallel()
	tree := testtree.Dir{}
	for d := range testbound.Scale(3, 8) {
		sub := testtree.Dir{}
		for i := range 40 {
			sub[fmt.Sprintf("f%02d.go", i)] = testtree.File{Content: strings.Repeat(fmt.Sprintf("func f%d_%d() int { return %d }\n", d, i, d*i), 30+i)}
		}
		sub["big.txt"] = testtree.File{Content: strings.Repeat(fmt.Sprintf("line of dir %d\n", d), 120_000)} // over 1 MiB
		tree[fmt.Sprintf("d%d", d)] = sub
	}
	f := newFixture(t, tree)
	f.open(Options{DeferCompression: true})
	first := f.save("first")
	want1 := onlyFiles(f.read())
	marks, _ := filepath.Glob(filepath.Join(f.store, "packs", "*.raw"))
	if len(marks) == 0 {
		t.Fatal("the deferred first save marked no pack")
	}
	raw := sum(packFiles(t, f.store))
	f.write("d0/f00.go", "changed\n")
	second := f.save("second")
	want2 := onlyFiles(f.read())

	res, err := f.e.Recompress(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Packs == 0 || res.Remaining != 0 || res.BytesAfter >= res.BytesBefore {
		t.Fatalf("recompress = %+v", res)
	}
	after := sum(packFiles(t, f.store))
	t.Logf("packs %d bytes raw, %d recompressed", raw, after)
	if after*2 > raw {
		t.Fatalf("recompressed packs hold %d bytes, the deferred save's %d", after, raw)
	}
	if marks, _ := filepath.Glob(filepath.Join(f.store, "packs", "*.raw")); len(marks) != 0 {
		t.Fatalf("marks left: %v", marks)
	}
	mustVerify(t, f.e)
	for _, c := range []struct {
		id   ID
		want map[string]string
	}{{first.ID, want1}, {second.ID, want2}} {
		f.restore(c.id.String(), RestoreOptions{NoBackup: true})
		if got := onlyFiles(f.read()); !maps.Equal(got, c.want) {
			t.Fatalf("restore of %s: files %v, want %v", c.id.Short(), sortedKeys(got), sortedKeys(c.want))
		}
	}
	if res, err := f.e.Recompress(context.Background()); err != nil || res.Packs != 0 {
		t.Fatalf("second recompress = %+v, %v; want nothing to do", res, err)
	}
}

// TestRecompressNextGoesPackByPack fills several deferred packs, then
// recompresses one per call: each call rewrites exactly one, the count
// left falls by one, the store verifies between calls and the files read
// back byte-exact at the end. A call cancelled in the middle of its pack
// returns the context's error and leaves the pack marked and the packs
// on disk as they were, and the next call redoes it. The long tests fill
// three times as many packs.
func TestRecompressNextGoesPackByPack(t *testing.T) {
	t.Parallel()
	tree := testtree.Dir{}
	for i := range testbound.Scale(200, 300) {
		tree[fmt.Sprintf("f%03d.txt", i)] = testtree.File{Content: strings.Repeat(fmt.Sprintf("row %d of a text file\n", i), 400)}
	}
	for i := range testbound.Scale(3, 6) { // over the group limit: records of their own
		tree[fmt.Sprintf("z%d.txt", i)] = testtree.File{Content: strings.Repeat(fmt.Sprintf("line of big file %d\n", i), 70_000)}
	}
	f := newFixture(t, tree)
	f.open(Options{DeferCompression: true, hooks: testHooks{packSize: 256 << 10}})
	first := f.save("first")
	want := onlyFiles(f.read())
	marks := func() int {
		m, _ := filepath.Glob(filepath.Join(f.store, "packs", "*.raw"))
		return len(m)
	}
	left := marks()
	if left < 4 {
		t.Fatalf("the deferred first save marked %d packs, want several", left)
	}

	ctx, cancel := context.WithCancel(context.Background())
	steps := 0
	f.open(Options{hooks: testHooks{packSize: 256 << 10, gcStep: func(op string) {
		if steps++; steps == 2 {
			cancel()
		}
	}}})
	before := packFiles(t, f.store)
	if _, err := f.e.RecompressNext(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled slice: %v, want context.Canceled", err)
	}
	if got := packFiles(t, f.store); marks() != left || !slices.Equal(got, before) {
		t.Fatalf("a cancelled slice left %d marks and packs %v, want %d and %v", marks(), got, left, before)
	}
	mustVerify(t, f.e)

	for left > 0 {
		res, err := f.e.RecompressNext(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if res.Packs != 1 || res.Remaining != left-1 || marks() != left-1 {
			t.Fatalf("slice with %d left: %+v, %d marks", left, res, marks())
		}
		left--
		mustVerify(t, f.e)
	}
	if res, err := f.e.RecompressNext(context.Background()); err != nil || res.Packs != 0 || res.Remaining != 0 {
		t.Fatalf("slice with nothing left: %+v, %v", res, err)
	}
	f.restore(first.ID.String(), RestoreOptions{NoBackup: true})
	if got := onlyFiles(f.read()); !maps.Equal(got, want) {
		t.Fatalf("restore after recompression: files %v, want %v", sortedKeys(got), sortedKeys(want))
	}
}

// TestRecompressCrashSafety kills a Recompress process before each of a
// spread of its store-changing steps (as TestGCCrashSafety does GC's) on a
// deferred store of several packs: every kill leaves a store that
// verifies, lists every checkpoint and reads it back byte-exact, and a
// collection afterwards leaves exactly the policy's survivors' records.
// The first save holds four versions of one file side by side, which the
// recompression stores as deltas of each other (similar.go): it is killed
// before each of those too.
func TestRecompressCrashSafety(t *testing.T) {
	testbound.Long(t, "kills a recompressing process before each of its steps")
	t.Parallel()
	h := newHistory(t, 9, 24)
	api := make([]byte, 1200)
	for i := range api {
		api[i] = byte(h.rng.Uint32())
	}
	for v := range 4 {
		api[v*40] ^= 0xff
		rel := fmt.Sprintf("v%d/api", v)
		h.f.write(rel, string(api))
		h.files[rel] = string(api)
	}
	crashTest(t, true, "recompress", Options{Now: h.now, DeferCompression: true, hooks: testHooks{packSize: 64 << 10}}, h)
}

// checkCounter is a context that counts the checks of its Err and reports
// context.Canceled from check number cancelAt on (never when 0).
type checkCounter struct {
	context.Context
	checks   atomic.Int64
	cancelAt int64
}

func (c *checkCounter) Err() error {
	if n := c.checks.Add(1); c.cancelAt > 0 && n >= c.cancelAt {
		return context.Canceled
	}
	return nil
}

// TestRecompressNextChecksItsContextWhileItScansTheLocators: a resident
// server cancels the recompression slice in flight when a request arrives,
// and the request waits for the slice to stop; the slice's scan of every
// blob's locator grows with the store, so it must notice. Over a store of
// 1,200 blobs, a slice checks its context at least once per 256 locators
// before it moves its first blob, and a slice cancelled halfway through
// those checks returns context.Canceled having moved nothing: the pack
// stays marked, the packs on disk are as they were, the store verifies.
func TestRecompressNextChecksItsContextWhileItScansTheLocators(t *testing.T) {
	t.Parallel()
	const files = 1200
	tree := testtree.Dir{}
	for i := range files {
		tree[fmt.Sprintf("f%04d.txt", i)] = testtree.File{Content: strings.Repeat(fmt.Sprintf("line of file %d\n", i), 150)}
	}
	f := newFixture(t, tree)
	f.open(Options{DeferCompression: true, hooks: testHooks{packSize: 256 << 10}})
	f.save("first")
	marks := func() int {
		m, _ := filepath.Glob(filepath.Join(f.store, "packs", "*.raw"))
		return len(m)
	}
	if marks() < 2 {
		t.Fatalf("the deferred first save marked %d packs, want several", marks())
	}

	ctx := &checkCounter{Context: context.Background()}
	var steps []string
	checksBeforeMoving := int64(-1)
	f.open(Options{hooks: testHooks{packSize: 256 << 10, gcStep: func(op string) {
		if steps = append(steps, op); len(steps) == 1 {
			checksBeforeMoving = ctx.checks.Load()
		}
	}}})
	if _, err := f.e.RecompressNext(ctx); err != nil {
		t.Fatal(err)
	}
	if checksBeforeMoving < files/256 {
		t.Fatalf("a slice checked its context %d times before moving a blob of a store of %d blobs, want at least %d",
			checksBeforeMoving, files, files/256)
	}

	left, before := marks(), packFiles(t, f.store)
	steps = nil
	if _, err := f.e.RecompressNext(&checkCounter{Context: context.Background(), cancelAt: checksBeforeMoving / 2}); !errors.Is(err, context.Canceled) {
		t.Fatalf("slice cancelled during its scan: %v, want context.Canceled", err)
	}
	if len(steps) != 0 || marks() != left || !slices.Equal(packFiles(t, f.store), before) {
		t.Fatalf("a slice cancelled during its scan took steps %v and left %d marks and packs %v, want none, %d and %v",
			steps, marks(), packFiles(t, f.store), left, before)
	}
	mustVerify(t, f.e)
}
