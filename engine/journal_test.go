package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ckpt/ckpt/internal/faultfs"
	"github.com/ckpt/ckpt/internal/storefs"
	"github.com/ckpt/ckpt/internal/testtree"
	"github.com/ckpt/ckpt/objects"
)

func TestInterruptedRestoreIsCompletedByTheNextWrite(t *testing.T) {
	t.Parallel()
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

	// From the eleventh file creation of the restore on, creations fail:
	// the disk is full.
	creates := 0
	plan := newFaultPlan(-1, syscall.ENOSPC, func(_ int, op faultfs.Op) bool {
		if op.Kind == faultfs.OpCreate {
			creates++
		}
		return op.Kind == faultfs.OpCreate && creates >= 11
	})
	f.open(plan.options(f.store))
	_, err := f.e.Restore(context.Background(), "@1", RestoreOptions{})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("restore error = %v, want the injected failure", err)
	}
	log, _ := f.e.List(context.Background(), "")
	if log.Head != two.ID {
		t.Fatal("an interrupted restore must not move the head")
	}
	j := f.e.PendingRestore()
	if j == nil || j.Task != DefaultTask || j.Head != log.Head {
		t.Fatalf("pending restore = %+v, want the journal recording head %s", j, log.Head.Short())
	}
	half := f.read()

	// A read-only process only reports it.
	f.open(Options{ReadOnly: true})
	if p := f.e.PendingRestore(); p == nil || p.Target != j.Target {
		t.Fatalf("read-only open: pending %+v", p)
	}

	// Opening to write only opens: the workspace stays as the
	// interruption left it until the first write.
	var events []Event
	f.open(Options{OnEvent: func(ev Event) { events = append(events, ev) }})
	assertSameTree(t, half, f.read())
	if f.e.PendingRestore() == nil {
		t.Fatal("a writing open settled the journal; only a write may")
	}
	events = nil
	res, err := f.e.Save(context.Background(), SaveOptions{Message: "after"})
	if err != nil {
		t.Fatal(err)
	}
	assertSameTree(t, original, f.read())
	done := res.Settled
	if done == nil || done.Completed == nil || done.Completed.Backup != j.Backup || len(done.Completed.Conflicts) != 0 {
		t.Fatalf("save settled %+v, want the journal's restore completed (backup %s), no conflicts", done, j.Backup.Short())
	}
	if f.e.PendingRestore() != nil {
		t.Fatal("journal still pending after completion")
	}
	if len(events) == 0 || events[0].Type != EventRestore || events[0].Commit != j.Target || !events[0].Resumed {
		t.Fatalf("events = %+v, want a resumed restore event first", events)
	}
	if res.Created {
		t.Fatalf("save after completion created %s; the workspace equals @1", res.ID.Short())
	}
	f.open(Options{})
	if s, err := f.e.SettleRestore(context.Background()); f.e.PendingRestore() != nil || s != nil || err != nil {
		t.Fatalf("journal found again after completion: %+v, %v", s, err)
	}
	log, _ = f.e.List(context.Background(), "")
	if log.Head.String() != log.Checkpoints[0].ID.String() {
		t.Fatal("head did not move to @1")
	}
}

func TestPendingRestoreThatFailsAgainKeepsItsJournal(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"a": testtree.File{Content: "a1"}, "b": testtree.File{Content: "b1"}, "c": testtree.File{Content: "c1"}})
	f.save("one")
	want := f.read()
	f.write("a", "a2")
	f.write("b", "b2")
	f.write("c", "c2")
	f.save("two")
	// The journal's temporary file is create 0, then come the workspace's
	// files; a completion writes no journal, so its create 0 is a file.
	diskFull := func(at int) Options {
		creates := 0
		return newFaultPlan(-1, syscall.ENOSPC, func(_ int, op faultfs.Op) bool {
			if op.Kind != faultfs.OpCreate {
				return false
			}
			creates++
			return creates-1 >= at // a full disk stays full
		}).options(f.store)
	}
	f.open(diskFull(2))
	if _, err := f.e.Restore(context.Background(), "@1", RestoreOptions{}); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("restore: %v, want ENOSPC", err)
	}
	f.e.Close()
	f.e = nil

	// Still no space when the next process completes it: its first write
	// fails and says why.
	f.open(diskFull(0))
	_, err := f.e.Save(context.Background(), SaveOptions{})
	var pending *PendingRestoreError
	if !errors.As(err, &pending) || !errors.Is(err, syscall.ENOSPC) || pending.Journal == nil {
		t.Fatalf("save: %v, want a PendingRestoreError wrapping ENOSPC", err)
	}
	f.open(Options{ReadOnly: true})
	if f.e.PendingRestore() == nil {
		t.Fatal("the failed completion lost the journal")
	}
	f.open(Options{})
	if s, err := f.e.SettleRestore(context.Background()); err != nil || s == nil || s.Completed == nil {
		t.Fatalf("the restore was not completed: %+v, %v", s, err)
	}
	assertSameTree(t, want, f.read())
}

// A partial restore of names that are not valid UTF-8 is resumed on the
// same names: the journal keeps their bytes.
func TestJournalKeepsNamesThatAreNotUTF8(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"x": testtree.File{Content: "x"}})
	j := &Journal{Task: DefaultTask, Paths: []string{"d/a\xff", "d/a\xfe", "ok"}, Started: time.Now().UTC().Round(0)}
	if err := f.e.writeJournal(j, true); err != nil {
		t.Fatal(err)
	}
	got, err := readJournal(f.e.fs, f.store)
	if err != nil || got == nil || !slices.Equal(got.Paths, j.Paths) {
		t.Fatalf("journal read back %+v, %v; want paths %q", got, err, j.Paths)
	}
	if err := f.e.clearJournal(); err != nil {
		t.Fatal(err)
	}
}

// A journal keeps the restore's Force; one written before Force was
// recorded reads as a restore without it.
func TestJournalRecordsForce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"x": testtree.File{Content: "x"}})
	j := &Journal{Task: DefaultTask, Force: true, Started: time.Now().UTC().Round(0)}
	if err := f.e.writeJournal(j, true); err != nil {
		t.Fatal(err)
	}
	if got, err := readJournal(f.e.fs, f.store); err != nil || got == nil || !got.Force {
		t.Fatalf("journal read back %+v, %v; want Force", got, err)
	}
	legacy := `{"task":"default","target":"","backup":"","head":"","started":"2024-01-02T03:04:05Z"}`
	if err := f.e.clearJournal(); err != nil {
		t.Fatal(err)
	}
	f.plantLegacyJournal(legacy)
	if got, err := readJournal(f.e.fs, f.store); err != nil || got == nil || got.Force {
		t.Fatalf("legacy journal read back %+v, %v; want no Force", got, err)
	}
	if err := f.e.clearJournal(); err != nil {
		t.Fatal(err)
	}
	if got, err := readJournal(f.e.fs, f.store); err != nil || got != nil {
		t.Fatalf("after clearing, the journals read back %+v, %v", got, err)
	}
}

// An older version's journal whose removal's directory sync failed is
// synced by the next clearing, though its name is gone already; once its
// absence is durable no clearing looks for it again.
func TestALegacyJournalsRemovalIsSyncedAgain(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"x": testtree.File{Content: "x"}})
	legacy := filepath.Join(f.store, legacyJournalName)
	var (
		mu              sync.Mutex
		removed, failed bool
		dirSyncs, looks int
	)
	inj := faultfs.InjectorFunc(func(op faultfs.Op) error {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case op.Kind == faultfs.OpRemove && op.Path == legacy:
			removed = true
		case op.Kind == faultfs.OpStat && op.Path == legacy:
			looks++
		case op.Kind == faultfs.OpFileSync && op.Path == f.store && removed:
			dirSyncs++
			if !failed {
				failed = true
				return syscall.EIO
			}
		}
		return nil
	})
	f.e.Close()
	if err := os.WriteFile(legacy, []byte(`{"task":"default","started":"2024-01-02T03:04:05Z"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	f.open(Options{hooks: testHooks{storeFS: faultfs.Wrap(storefs.OS, inj)}})
	if err := f.e.clearJournal(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("clearing with the removal's directory sync failing: %v", err)
	}
	for range 2 {
		if err := f.e.clearJournal(); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if dirSyncs != 2 || looks != 2 {
		t.Fatalf("the store's directory synced %d times after the removal, the older journal looked for %d times; want 2 and 2", dirSyncs, looks)
	}
}

// plantLegacyJournal leaves an older version's journal holding content, the
// engine knowing of it no more than one opened on the store would.
func (f *fixture) plantLegacyJournal(content string) {
	f.t.Helper()
	if err := os.WriteFile(filepath.Join(f.store, legacyJournalName), []byte(content), 0o600); err != nil {
		f.t.Fatal(err)
	}
	f.e.legacyJournal = legacyJournalUnknown
}

// leaveJournalFile restores @1 and then the head again, without backups:
// the store's journal file is there, clear, as any restore leaves it, and
// the next restore writes over it in place.
func (f *fixture) leaveJournalFile() {
	f.t.Helper()
	head := f.list().Head
	f.restore("@1", RestoreOptions{NoBackup: true})
	f.restore(head.String(), RestoreOptions{NoBackup: true})
}

// pendingOnDisk says whether the store in dir holds a journal that is not
// clear.
func pendingOnDisk(t *testing.T, dir string) bool {
	t.Helper()
	j, err := readJournal(storefs.OS, dir)
	if err != nil {
		t.Fatal(err)
	}
	return j != nil
}

// The journal file is written in place and cleared by its state byte: a
// record a crash cut off before its sync (a torn tail, a length past the
// file's end) reads as no journal, a shorter record over a longer one reads
// whole, a state or header that is no journal's is corrupt, and an older
// version's journal counts while the current one is clear.
func TestJournalFileIsRewrittenInPlace(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"x": testtree.File{Content: "x"}})
	path := f.e.journalPath()
	read := func() (*Journal, error) { return readJournal(f.e.fs, f.store) }
	long := &Journal{Task: DefaultTask, Paths: []string{"a/long/path/one", "a/long/path/two", "three"}, Started: time.Now().UTC().Round(0)}
	if err := f.e.writeJournal(long, true); err != nil {
		t.Fatal(err)
	}
	if got, err := read(); err != nil || got == nil || !slices.Equal(got.Paths, long.Paths) {
		t.Fatalf("journal read back %+v, %v", got, err)
	}
	if err := f.e.clearJournal(); err != nil {
		t.Fatal(err)
	}
	if got, err := read(); err != nil || got != nil {
		t.Fatalf("cleared journal read back %+v, %v", got, err)
	}
	before, err := os.Stat(path)
	if err != nil {
		t.Fatalf("the cleared journal's file is gone: %v", err)
	}
	short := &Journal{Task: DefaultTask, Force: true, Started: long.Started}
	if err := f.e.writeJournal(short, true); err != nil {
		t.Fatal(err)
	}
	if got, err := read(); err != nil || got == nil || got.Paths != nil || !got.Force {
		t.Fatalf("the shorter journal read back %+v, %v", got, err)
	}
	after, err := os.Stat(path)
	if err != nil || !os.SameFile(before, after) || after.Size() != before.Size() {
		t.Fatalf("the journal's file was replaced or cut: %v, %v", after, err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := int(binary.LittleEndian.Uint32(good[4:8]))
	damage := func(name string, change func(b []byte), corrupt bool) {
		b := slices.Clone(good)
		change(b)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := read()
		if corrupt != errors.Is(err, objects.ErrCorrupt) || got != nil {
			t.Errorf("%s: read %+v, %v; want corrupt %v and no journal", name, got, err, corrupt)
		}
	}
	damage("a torn record", func(b []byte) { b[journalHeader+n-1] ^= 1 }, false)
	damage("a torn length", func(b []byte) { b[4]++ }, false)
	damage("a length past the end", func(b []byte) { binary.LittleEndian.PutUint32(b[4:8], uint32(len(b))) }, false)
	damage("an unknown state", func(b []byte) { b[3] = 'x' }, true)
	damage("no journal's header", func(b []byte) { copy(b, "{}!") }, true)

	if err := os.WriteFile(path, good, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := f.e.clearJournal(); err != nil {
		t.Fatal(err)
	}
	cleared, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	good = cleared
	// A later record cut off after its first four bytes: the cleared one
	// under it must not come back.
	damage("a cleared record under a later state byte", func(b []byte) { b[3] = journalPending }, false)

	if err := os.WriteFile(path, cleared, 0o600); err != nil {
		t.Fatal(err)
	}
	legacy := filepath.Join(f.store, legacyJournalName)
	old := `{"task":"default","target":"","backup":"","head":"","started":"2024-01-02T03:04:05Z"}`
	plantLegacy := func() { t.Helper(); f.plantLegacyJournal(old) }
	plantLegacy()
	if got, err := read(); err != nil || got == nil || !got.Started.Equal(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Fatalf("an older version's journal beside a clear one read back %+v, %v", got, err)
	}
	// Resuming writes the same restore's record anew, then removes the
	// old one: between the two both are read as one.
	same, err := read()
	if err != nil {
		t.Fatal(err)
	}
	same.Paths = []string{"only"}
	if err := f.e.writeJournal(same, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(legacy); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("writing the journal left the older version's: %v", err)
	}
	plantLegacy()
	if got, err := read(); err != nil || got == nil || !slices.Equal(got.Paths, same.Paths) {
		t.Fatalf("the same restore in both files read back %+v, %v; want the current one", got, err)
	}
	other := *same
	other.Started = other.Started.Add(time.Second)
	if err := f.e.writeJournal(&other, true); err != nil {
		t.Fatal(err)
	}
	plantLegacy()
	if got, err := read(); !errors.Is(err, objects.ErrCorrupt) || got != nil {
		t.Fatalf("two restores pending, one in each file, read back %+v, %v; want a corrupt store", got, err)
	}
	if err := f.e.clearJournal(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(legacy); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("an older version's journal stays after clearing: %v", err)
	}
	if got, err := read(); err != nil || got != nil {
		t.Fatalf("after clearing both read back %+v, %v", got, err)
	}
}

// A restore whose journal's write over the file of an earlier one fails
// half way (a full disk) changes nothing and leaves nothing pending: the
// torn record reads as no journal. One whose write landed but whose sync
// failed stays pending, and completing it, in the same engine, writes the
// journal anew (renamed into place, its directory synced) before it changes
// the workspace: the disk may not hold it.
func TestAJournalCutShortInPlaceLeavesNothingPending(t *testing.T) {
	t.Parallel()
	for _, failing := range []faultfs.OpKind{faultfs.OpFileWrite, faultfs.OpFileSync} {
		t.Run(failing.String(), func(t *testing.T) {
			t.Parallel()
			c := newFaultCase(t)
			c.f.leaveJournalFile()
			failed := false
			var ops []faultfs.Op
			plan := newFaultPlan(-1, syscall.ENOSPC, func(_ int, op faultfs.Op) bool {
				ops = append(ops, op)
				if failed || op.Kind != failing || filepath.Base(op.Path) != journalName {
					return false
				}
				failed = true
				return true
			})
			c.f.open(plan.options(c.f.store))
			if _, err := restoreBounded(t, c.f.e, "@1"); !errors.Is(err, syscall.ENOSPC) || !failed {
				t.Fatalf("restore with the journal's %v failing: %v", failing, err)
			}
			pending := c.f.e.PendingRestore() != nil
			if pending != (failing == faultfs.OpFileSync) || pending != pendingOnDisk(t, c.f.store) {
				t.Fatalf("pending %v in the engine, %v on disk", pending, pendingOnDisk(t, c.f.store))
			}
			if b, err := os.ReadFile(c.f.e.journalPath()); failing == faultfs.OpFileWrite {
				if _, ok, rerr := journalRecord(b); err != nil || b[3] != journalPending || ok || rerr != nil {
					t.Fatalf("the journal's file after its write failed: %q, %v; want a torn pending record", b, err)
				}
			}
			assertSameTree(t, c.trees[c.two], c.f.read())
			ops = nil
			settled, err := c.f.e.SettleRestore(context.Background())
			if err != nil || (settled != nil) != pending {
				t.Fatalf("settled %+v, %v", settled, err)
			}
			if !pending {
				assertSameTree(t, c.trees[c.two], c.f.read())
				return
			}
			renamed := slices.IndexFunc(ops, func(op faultfs.Op) bool {
				return op.Kind == faultfs.OpRename && filepath.Base(op.Path) == journalName
			})
			synced := slices.IndexFunc(ops[max(renamed, 0):], func(op faultfs.Op) bool {
				return op.Kind == faultfs.OpFileSync && op.Path == c.f.store
			}) + max(renamed, 0)
			changed := slices.IndexFunc(ops, func(op faultfs.Op) bool { return !filepath.IsAbs(op.Path) })
			if renamed < 0 || synced < renamed || changed < synced {
				t.Fatalf("completing the restore renamed its journal into place at %d, synced the store at %d, changed the workspace first at %d: %v",
					renamed, synced, changed, ops)
			}
			assertSameTree(t, c.trees[c.one], c.f.read())
		})
	}
}
