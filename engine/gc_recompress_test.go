package engine

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/internal/testtree"
)

// TestRecompressShrinksADeferredFirstSave saves a tree of source-like text
// with DeferCompression: the first save stores it uncompressed and marks
// its packs, a second save compresses as it writes, Recompress rewrites the
// marked packs into less than half their bytes and drops no checkpoint,
// both checkpoints restore byte-exact, the store verifies, and a second
// Recompress finds nothing to do.
func TestRecompressShrinksADeferredFirstSave(t *testing.T) {
	t.Parallel()
	tree := testtree.Dir{}
	for d := range 8 {
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
	if res == nil || len(res.Dropped) != 0 || res.PacksRewritten == 0 {
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
	if res, err := f.e.Recompress(context.Background()); err != nil || res != nil {
		t.Fatalf("second recompress = %+v, %v; want nothing to do", res, err)
	}
}
