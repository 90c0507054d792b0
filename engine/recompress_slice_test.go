package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/internal/testtree"
)

// TestRecompressNextSlicesAPackAndKeepsEachCommittedSlice recompresses the
// deferred packs of a first save in slices of 2 MiB of their records (about
// one group record each): every slice that does not empty its pack leaves
// it marked and the count waiting unchanged, rewrites at most the slice's
// bytes and leaves a store that verifies; a slice cancelled midway moves
// nothing and the next one goes on from the last committed slice, so the
// slices move exactly the blobs unbounded slices move from the same store;
// the slice that empties a pack removes it, and the first checkpoint
// restores byte-exact.
func TestRecompressNextSlicesAPackAndKeepsEachCommittedSlice(t *testing.T) {
	t.Parallel()
	const slice = 2 << 20
	tree := testtree.Dir{}
	for d := range 4 {
		dir := testtree.Dir{}
		for i := range 9 {
			dir[fmt.Sprintf("f%03d.txt", i)] = testtree.File{Content: strings.Repeat(fmt.Sprintf("row %d.%d of a text file\n", d, i), 6000)}
		}
		tree[fmt.Sprintf("d%d", d)] = dir
	}
	whole := newFixture(t, tree)
	whole.open(Options{DeferCompression: true})
	whole.save("first")
	all, err := whole.e.Recompress(context.Background())
	if err != nil || all.Packs == 0 || all.Remaining != 0 {
		t.Fatalf("unbounded slices: %+v, %v; want every pack done", all, err)
	}

	f := newFixture(t, tree)
	f.open(Options{DeferCompression: true})
	first := f.save("first")
	want := onlyFiles(f.read())
	marks := func() int {
		m, _ := filepath.Glob(filepath.Join(f.store, "packs", "*.raw"))
		return len(m)
	}
	left := marks() // one or two: how a save spreads its records over packs varies
	packs := left
	if left == 0 {
		t.Fatal("the deferred first save marked no pack")
	}
	ctx, cancel := context.WithCancel(context.Background())
	steps, cancelAt := 0, -1
	f.open(Options{hooks: testHooks{recompressSlice: slice, gcStep: func(op string) {
		if steps++; steps == cancelAt {
			cancel()
		}
	}}})
	moved, n := 0, 0
	for {
		if n == 2 { // cancel the third slice at its second step
			cancelAt = steps + 2
			before := packFiles(t, f.store)
			if _, err := f.e.RecompressNext(ctx); !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled slice: %v, want context.Canceled", err)
			}
			if got := packFiles(t, f.store); !slices.Equal(got, before) || marks() != left {
				t.Fatalf("a cancelled slice left packs %v and %d marks, want %v and %d", got, marks(), before, left)
			}
			mustVerify(t, f.e)
		}
		res, err := f.e.RecompressNext(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		n++
		moved += res.Blobs
		mustVerify(t, f.e)
		if res.Packs == 1 {
			if left--; res.Remaining != left || marks() != left {
				t.Fatalf("slice %d finishing a pack: %+v, %d marks; want %d left", n, res, marks(), left)
			}
			if left == 0 {
				break
			}
			continue
		}
		if res.Blobs == 0 || res.BytesBefore > slice || res.Remaining != left || marks() != left {
			t.Fatalf("slice %d: %+v, %d marks; want some blobs, at most %d bytes, %d packs still waiting", n, res, marks(), slice, left)
		}
	}
	if n <= packs || moved != all.Blobs {
		t.Fatalf("%d slices of %d packs moved %d blobs; want more slices than packs moving the %d unbounded slices move", n, packs, moved, all.Blobs)
	}
	f.restore(first.ID.String(), RestoreOptions{NoBackup: true})
	if got := onlyFiles(f.read()); !maps.Equal(got, want) {
		t.Fatalf("restore after sliced recompression: files %v, want %v", sortedKeys(got), sortedKeys(want))
	}
}
