package engine

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/ckpt/ckpt/internal/testtree"
)

func TestInterruptedRestoreResumes(t *testing.T) {
	tree := testtree.Dir{}
	for i := 0; i < 40; i++ {
		tree[fmt.Sprintf("f%02d", i)] = testtree.File{Content: fmt.Sprintf("v1 %d\n", i)}
	}
	f := newFixture(t, tree)
	f.save("v1")
	original := f.read()
	for i := 0; i < 40; i++ {
		f.write(fmt.Sprintf("f%02d", i), fmt.Sprintf("v2 %d\n", i))
	}
	two := f.save("v2")

	var writes atomic.Int32
	diskFull := errors.New("no space left on device")
	injectWriteFault = func(string) error {
		if writes.Add(1) > 10 {
			return diskFull
		}
		return nil
	}
	_, err := f.e.Restore(context.Background(), "@1", RestoreOptions{})
	injectWriteFault = nil
	if !errors.Is(err, diskFull) {
		t.Fatalf("restore error = %v, want the injected failure", err)
	}
	log, _ := f.e.List(context.Background(), "")
	if log.Head != two.ID {
		t.Fatal("an interrupted restore must not move the head")
	}

	f.open(Options{}) // a new process finds the journal
	j := f.e.PendingRestore()
	if j == nil || j.Task != DefaultTask {
		t.Fatalf("pending restore = %+v, want a journal", j)
	}
	res := f.restore("@1", RestoreOptions{})
	assertSameTree(t, original, f.read())
	if res.Backup != j.Backup {
		t.Fatalf("resumed restore took a new backup %s, want the journal's %s", res.Backup.Short(), j.Backup.Short())
	}
	if f.e.PendingRestore() != nil {
		t.Fatal("journal still pending after completion")
	}
	f.open(Options{})
	if f.e.PendingRestore() != nil {
		t.Fatal("journal found again after completion")
	}
	log, _ = f.e.List(context.Background(), "")
	if log.Head.String() != log.Checkpoints[0].ID.String() {
		t.Fatal("head did not move to @1")
	}
}
