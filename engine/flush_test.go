package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ckpt/ckpt/internal/testtree"
)

// wideTree has dirs directories of files files each.
func wideTree(dirs, files int, version string) testtree.Dir {
	tree := testtree.Dir{}
	for d := 0; d < dirs; d++ {
		sub := testtree.Dir{}
		for i := 0; i < files; i++ {
			sub[fmt.Sprintf("f%03d.txt", i)] = testtree.File{Content: fmt.Sprintf("%s %d/%d\n", version, d, i)}
		}
		tree[fmt.Sprintf("d%03d", d)] = sub
	}
	return tree
}

// A save larger than one flush writes its trees and stat cache in several
// index batches; the checkpoint still appears only at the end, and a save
// that fails after a flush leaves a store that verifies with the old head.
func TestSaveFlushesInBoundedBatches(t *testing.T) {
	t.Parallel()
	f := newFixture(t, wideTree(20, 30, "v1"))
	var afterFlush func() // what each flush runs, changed as the test goes
	f.open(Options{hooks: testHooks{flushEntries: 50, afterFlush: func() { afterFlush() }}})
	original := f.read()
	flushes := 0
	afterFlush = func() { flushes++ }
	one := f.save("v1")
	if flushes < 5 {
		t.Fatalf("%d flushes for 620 entries at 50 per flush", flushes)
	}
	if one.Stats.Added != 600 {
		t.Fatalf("stats = %+v", one.Stats)
	}

	for d := 0; d < 20; d++ {
		f.write(fmt.Sprintf("d%03d/f000.txt", d), "edited\n")
	}
	ctx, cancel := context.WithCancel(context.Background())
	afterFlush = cancel // fail the save right after its first flush
	_, err := f.e.Save(ctx, SaveOptions{Message: "interrupted"})
	afterFlush = func() {}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted save: %v", err)
	}
	log, _ := f.e.List(context.Background(), "")
	if len(log.Checkpoints) != 1 || log.Head != one.ID {
		t.Fatalf("an interrupted save changed the task: %+v", log)
	}
	if _, err := f.e.Verify(context.Background(), VerifyOptions{}); err != nil {
		t.Fatalf("verify after an interrupted save: %v", err)
	}
	two := f.save("v2")
	if two.Stats.Modified != 20 {
		t.Fatalf("save after the interruption: %+v", two.Stats)
	}
	f.restore("@1", RestoreOptions{})
	assertSameTree(t, original, f.read())
}
