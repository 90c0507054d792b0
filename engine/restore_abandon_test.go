package engine

import (
	"context"
	"errors"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/ckpt/ckpt/engine/internal/restore"
	"github.com/ckpt/ckpt/internal/faultfs"
	"github.com/ckpt/ckpt/internal/testtree"
	"github.com/ckpt/ckpt/objects"
)

// abandonFixture saves a, b and c twice, @1 and @2, and returns the
// workspace as @1 and as @2 left it.
func abandonFixture(t *testing.T) (f *fixture, one, two map[string]testtree.Entry) {
	f = newFixture(t, testtree.Dir{
		"a": testtree.File{Content: strings.Repeat("a one ", 80)},
		"b": testtree.File{Content: strings.Repeat("b one ", 80)},
		"c": testtree.File{Content: strings.Repeat("c one ", 80)},
	})
	f.save("one")
	one = f.read()
	for _, name := range []string{"a", "b", "c"} {
		f.write(name, strings.Repeat(name+" two ", 80))
	}
	f.save("two")
	return f, one, f.read()
}

// damageBlob flips a byte of the stored content of rel in checkpoint ref.
func damageBlob(t *testing.T, f *fixture, ref, rel string) {
	t.Helper()
	ents, err := f.e.Ls(context.Background(), "", ref, rel)
	if err != nil {
		t.Fatal(err)
	}
	editPack(t, f, ents[0].ID, func(b []byte, loc objects.Locator) { b[loc.Offset+int64(loc.Length)-3] ^= 0x40 })
}

// assertEachPathOldOrNew fails unless every path of got holds what it
// held in one of the two trees, and no restore temporary is left.
func assertEachPathOldOrNew(t *testing.T, got, old, new map[string]testtree.Entry) {
	t.Helper()
	for p, e := range got {
		if strings.Contains(p, restore.TempPrefix) {
			t.Fatalf("a restore temporary is left: %s", p)
		}
		if e != old[p] && e != new[p] {
			t.Fatalf("%s holds %+v, neither %+v nor %+v", p, e, old[p], new[p])
		}
	}
}

// A restore whose content the store cannot give (a damaged blob) stops
// and drops its journal: no completion could ever clear it, and it would
// stop every later write. The workspace keeps each path whole, the error
// says the restore was abandoned and names the backup, a warning event
// says the journal went, and the next save works.
func TestARestoreOfDamagedContentIsAbandoned(t *testing.T) {
	t.Parallel()
	f, one, two := abandonFixture(t)
	damageBlob(t, f, "@1", "b")
	var mu sync.Mutex
	var warnings []string
	f.open(Options{OnEvent: func(ev Event) {
		if ev.Type == EventWarning {
			mu.Lock()
			warnings = append(warnings, ev.Message)
			mu.Unlock()
		}
	}})
	_, err := f.e.Restore(context.Background(), "@1", RestoreOptions{})
	var abandoned *abandonedRestoreError
	if !errors.Is(err, ErrCorrupt) || !errors.As(err, &abandoned) {
		t.Fatalf("restore of a damaged blob: %v, want ErrCorrupt, abandoned", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "abandoned") || !strings.Contains(msg, abandoned.journal.Backup.Short()) || strings.Contains(msg, "keeps it pending") {
		t.Fatalf("the error does not say the restore was abandoned and where the backup is: %s", msg)
	}
	if f.e.PendingRestore() != nil {
		t.Fatal("the abandoned restore is still pending")
	}
	if j, err := readJournal(f.e.fs, f.store); j != nil || err != nil {
		t.Fatalf("the journal on disk: %+v, %v; want it clear", j, err)
	}
	mu.Lock()
	if len(warnings) != 1 || !strings.Contains(warnings[0], "cannot give its content") {
		t.Fatalf("warnings: %q, want one saying the journal was dropped and why", warnings)
	}
	mu.Unlock()
	assertEachPathOldOrNew(t, f.read(), one, two)
	f.write("d", "new work")
	if _, err := f.e.Save(context.Background(), SaveOptions{Message: "after"}); err != nil {
		t.Fatalf("save after the abandoned restore: %v", err)
	}
}

// A restore interrupted by a full disk stays pending; when its
// completion then meets damaged content, the write that settles it drops
// the journal (Discarded says why) and goes on, where it used to fail
// every write for ever.
func TestAPendingRestoreOfDamagedContentIsDiscardedBySettling(t *testing.T) {
	t.Parallel()
	f, one, two := abandonFixture(t)
	creates := 0
	f.open(newFaultPlan(-1, syscall.ENOSPC, func(_ int, op faultfs.Op) bool {
		if op.Kind != faultfs.OpCreate {
			return false
		}
		creates++
		return creates-1 >= 2 // the journal's file, a workspace file, then this and every one after: a full disk stays full
	}).options(f.store))
	if _, err := f.e.Restore(context.Background(), "@1", RestoreOptions{}); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("restore: %v, want ENOSPC", err)
	}
	if f.e.PendingRestore() == nil {
		t.Fatal("the interrupted restore left no journal")
	}
	damageBlob(t, f, "@1", "c") // reopens the store

	f.write("d", "new work")
	res, err := f.e.Save(context.Background(), SaveOptions{Message: "after"})
	if err != nil {
		t.Fatalf("save over a pending restore of damaged content: %v", err)
	}
	if res.Settled == nil || !strings.Contains(res.Settled.Discarded, "cannot give its content") || res.Settled.Completed != nil {
		t.Fatalf("settled: %+v, want the journal discarded because the content cannot be read", res.Settled)
	}
	if f.e.PendingRestore() != nil {
		t.Fatal("the journal is still pending")
	}
	got := f.read()
	delete(got, "d")
	assertEachPathOldOrNew(t, got, one, two)
}
