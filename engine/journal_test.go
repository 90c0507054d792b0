package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ckpt/ckpt/index"
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
// half way (a full disk), or lands but fails to sync, changes nothing and
// leaves nothing pending: the record, which may be on the disk all the
// same, is cleared again (a torn one reads as no journal anyway).
func TestAJournalCutShortInPlaceLeavesNothingPending(t *testing.T) {
	t.Parallel()
	for _, failing := range []faultfs.OpKind{faultfs.OpFileWrite, faultfs.OpFileSync} {
		t.Run(failing.String(), func(t *testing.T) {
			t.Parallel()
			c := newFaultCase(t)
			c.f.leaveJournalFile()
			failed := false
			plan := newFaultPlan(-1, syscall.ENOSPC, func(_ int, op faultfs.Op) bool {
				if failed || op.Kind != failing || filepath.Base(op.Path) != journalName {
					return false
				}
				failed = true
				return true
			})
			c.f.open(plan.options(c.f.store))
			_, err := restoreBounded(t, c.f.e, "@1")
			var interrupted *InterruptedRestoreError
			if !errors.Is(err, syscall.ENOSPC) || !failed || errors.As(err, &interrupted) {
				t.Fatalf("restore with the journal's %v failing: %v; want ENOSPC, nothing pending", failing, err)
			}
			if c.f.e.PendingRestore() != nil || pendingOnDisk(t, c.f.store) {
				t.Fatalf("pending %v in the engine, %v on disk", c.f.e.PendingRestore() != nil, pendingOnDisk(t, c.f.store))
			}
			if b, err := os.ReadFile(c.f.e.journalPath()); err != nil || b[3] != journalClear {
				t.Fatalf("the journal's file after its %v failed: %q, %v; want it cleared again", failing, b, err)
			}
			assertSameTree(t, c.trees[c.two], c.f.read())
			settled, err := c.f.e.SettleRestore(context.Background())
			if err != nil || settled != nil {
				t.Fatalf("settled %+v, %v; want nothing to settle", settled, err)
			}
			assertSameTree(t, c.trees[c.two], c.f.read())
		})
	}
}

// Completing an interrupted restore writes its journal anew (renamed into
// place, its directory synced) before it changes the workspace: the file's
// record may not be on the disk.
func TestACompletionWritesItsJournalAnewFirst(t *testing.T) {
	t.Parallel()
	f, one, _ := cancelledRestoreFixture(t, Options{})
	log := &opLog{}
	f.open(newFaultPlan(-1, 0, log.fails).options(f.store))
	settled, err := f.e.SettleRestore(context.Background())
	if err != nil || settled == nil || settled.Completed == nil {
		t.Fatalf("settled %+v, %v", settled, err)
	}
	f.e.syncing.Wait()
	ops := log.taken()
	renamed := slices.IndexFunc(ops, func(op faultfs.Op) bool {
		return op.Kind == faultfs.OpRename && filepath.Base(op.Path) == journalName
	})
	synced := slices.IndexFunc(ops[max(renamed, 0):], func(op faultfs.Op) bool {
		return op.Kind == faultfs.OpFileSync && op.Path == f.store
	}) + max(renamed, 0)
	changed := slices.IndexFunc(ops, func(op faultfs.Op) bool { return !filepath.IsAbs(op.Path) })
	if renamed < 0 || synced < renamed || changed < synced {
		t.Fatalf("completing the restore renamed its journal into place at %d, synced the store at %d, changed the workspace first at %d: %v",
			renamed, synced, changed, ops)
	}
	if head := f.list().Head; head != one.ID {
		t.Fatalf("head %s after the completion, want %s", head.Short(), one.ID.Short())
	}
}

// journalSyncs is a faultPlan's fails that counts the data syncs of the
// journal's file and hands each, numbered from 1, to at, failing it when
// at returns true.
func journalSyncs(at func(n int32, op faultfs.Op) bool) func(int, faultfs.Op) bool {
	var n atomic.Int32
	return func(_ int, op faultfs.Op) bool {
		if op.Kind != faultfs.OpFileSync || filepath.Base(op.Path) != journalName {
			return false
		}
		return at(n.Add(1), op)
	}
}

// A restore answers once its changes are durable, before its journal's
// clearing is synced; that sync holds the write lock, so the next write
// operation begins once it is durable. (Were the sync inside the restore,
// the restore would wait for its own answer, and hang.)
func TestARestoreAnswersBeforeItsJournalClearingIsSynced(t *testing.T) {
	t.Parallel()
	c := newFaultCase(t)
	c.f.leaveJournalFile() // the record and its clearing written in place
	answered, checked := make(chan struct{}), make(chan struct{})
	var answer sync.Once
	t.Cleanup(func() { answer.Do(func() { close(answered) }) }) // a restore that waits for the sync ends
	var lockHeld atomic.Bool
	plan := newFaultPlan(-1, 0, journalSyncs(func(n int32, _ faultfs.Op) bool {
		if n == 2 { // the record's sync is the first
			<-answered
			if c.f.e.writeMu.TryLock() {
				c.f.e.writeMu.Unlock()
			} else {
				lockHeld.Store(true)
			}
			close(checked)
		}
		return false
	}))
	c.f.open(plan.options(c.f.store))
	done := make(chan error, 1)
	go func() {
		_, err := c.f.e.Restore(context.Background(), "@1", RestoreOptions{})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(faultTimeout):
		t.Fatal("the restore did not answer before its journal's clearing was synced")
	}
	if pendingOnDisk(t, c.f.store) {
		t.Fatal("at the answer the journal is pending; want it cleared")
	}
	answer.Do(func() { close(answered) })
	select {
	case <-checked:
	case <-time.After(faultTimeout):
		t.Fatal("the journal's clearing was never synced")
	}
	if !lockHeld.Load() {
		t.Fatal("the journal's clearing was synced without the write lock: the next write could begin before it is durable")
	}
	c.f.save("after")
	assertSameTree(t, c.trees[c.one], c.f.read())
}

// A journal clearing whose sync fails is reported, and written again and
// synced at the end of the next write operation (after a failed sync the
// page may count as clean without being on the disk); Close does it for
// one still left.
func TestAJournalClearingWhoseSyncFailsIsSyncedAgain(t *testing.T) {
	t.Parallel()
	for _, by := range []string{"next write", "close"} {
		t.Run(by, func(t *testing.T) {
			t.Parallel()
			c := newFaultCase(t)
			c.f.leaveJournalFile()
			var mu sync.Mutex
			var warnings []string
			var after []faultfs.OpKind // the journal's operations after the failed sync
			failing := journalSyncs(func(n int32, _ faultfs.Op) bool { return n == 2 })
			opts := newFaultPlan(-1, syscall.EIO, func(i int, op faultfs.Op) bool {
				fail := failing(i, op)
				mu.Lock()
				if after != nil && filepath.Base(op.Path) == journalName {
					after = append(after, op.Kind)
				}
				if fail {
					after = []faultfs.OpKind{}
				}
				mu.Unlock()
				return fail
			}).options(c.f.store)
			opts.OnEvent = func(ev Event) {
				if ev.Type == EventWarning {
					mu.Lock()
					warnings = append(warnings, ev.Message)
					mu.Unlock()
				}
			}
			c.f.open(opts)
			c.f.restore("@1", RestoreOptions{})
			mu.Lock()
			warned := slices.ContainsFunc(warnings, func(m string) bool { return strings.Contains(m, "clear restore journal") })
			mu.Unlock()
			if !warned || !c.f.e.clearUnsynced.Load() {
				t.Fatalf("warnings %q, clearing unsynced %v; want the failed sync reported and left to do", warnings, c.f.e.clearUnsynced.Load())
			}
			if by == "close" {
				if err := c.f.e.Close(); err != nil || c.f.e.clearUnsynced.Load() {
					t.Fatalf("close: %v, clearing unsynced %v", err, c.f.e.clearUnsynced.Load())
				}
			} else {
				c.f.save("after")
				c.f.e.syncing.Wait()
				if c.f.e.clearUnsynced.Load() || pendingOnDisk(t, c.f.store) {
					t.Fatalf("after the next write: clearing unsynced %v, pending %v", c.f.e.clearUnsynced.Load(), pendingOnDisk(t, c.f.store))
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(after, []faultfs.OpKind{faultfs.OpFileWrite, faultfs.OpFileSync}) {
				t.Fatalf("the journal's operations after the failed sync: %v; want the clearing written again, then synced", after)
			}
		})
	}
}

// A clearing whose sync keeps failing fails the next write operation
// before it begins, and the one after, once the sync succeeds, goes on; a
// Close whose own try fails reports it, and a second Close, after the
// store's lock is let go, writes nothing over what the journal's file
// holds by then (another Engine's record).
func TestAJournalClearingThatCannotBeSyncedStopsTheNextWrite(t *testing.T) {
	t.Parallel()
	c := newFaultCase(t)
	c.f.leaveJournalFile()
	var record []byte
	var failing atomic.Int32 // the journal syncs from this one on fail
	failing.Store(2)
	opts := newFaultPlan(-1, syscall.EIO, journalSyncs(func(n int32, op faultfs.Op) bool {
		if n == 1 {
			var err error
			if record, err = os.ReadFile(op.Path); err != nil {
				panic(err)
			}
		}
		return n >= failing.Load()
	})).options(c.f.store)
	c.f.open(opts)
	c.f.restore("@1", RestoreOptions{})
	if _, err := c.f.e.Save(context.Background(), SaveOptions{Message: "blocked"}); !errors.Is(err, syscall.EIO) {
		t.Fatalf("save with the clearing unsynced: %v, want the sync's EIO", err)
	}
	failing.Store(1 << 30) // the syncs succeed from here
	c.f.save("after")
	if c.f.e.clearUnsynced.Load() {
		t.Fatal("the clearing is still unsynced after a write began")
	}
	failing.Store(0) // and fail from here
	if _, err := c.f.e.Restore(context.Background(), "@1", RestoreOptions{}); err == nil {
		t.Fatal("a restore whose journal cannot be synced succeeded")
	}
	old := c.f.e
	if err := old.Close(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("close with the clearing unsynced: %v, want the sync's EIO", err)
	}
	if err := os.WriteFile(old.journalPath(), record, 0o600); err != nil { // another Engine's, say
		t.Fatal(err)
	}
	if err := old.Close(); err != nil || !pendingOnDisk(t, c.f.store) {
		t.Fatalf("second close: %v, journal pending %v; want the file left as it is", err, pendingOnDisk(t, c.f.store))
	}
}

// A power cut between a restore's answer and its clearing's sync brings
// its journal back. Completing it again finds the workspace as the restore
// left it but for what changed since: it leaves an edit alone (a conflict:
// no checkpoint holds it), writes again a file removed, and changes
// nothing else.
func TestARestoreWhoseClearingWasLostIsCompletedAgain(t *testing.T) {
	t.Parallel()
	c := newFaultCase(t)
	c.f.leaveJournalFile()
	var record []byte
	plan := newFaultPlan(-1, 0, journalSyncs(func(n int32, op faultfs.Op) bool {
		if n == 1 { // the record, written and about to be synced
			var err error
			if record, err = os.ReadFile(op.Path); err != nil {
				panic(err)
			}
		}
		return false
	}))
	c.f.open(plan.options(c.f.store))
	c.f.restore("@1", RestoreOptions{})
	if _, pending, err := journalRecord(record); err != nil || !pending {
		t.Fatalf("the record captured at its sync: pending %v, %v", pending, err)
	}
	c.f.write("tree/a", "edited after the answer\n")
	if err := os.Remove(filepath.Join(c.f.ws, "tree", "b", "c")); err != nil {
		t.Fatal(err)
	}
	if err := c.f.e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.f.e.journalPath(), record, 0o600); err != nil { // the clearing lost
		t.Fatal(err)
	}
	c.f.open(Options{})
	settled, err := c.f.e.SettleRestore(context.Background())
	if err != nil || settled == nil || settled.Completed == nil {
		t.Fatalf("settled %+v, %v; want the restore completed again", settled, err)
	}
	if got := conflictPaths(settled.Completed); !slices.Equal(got, []string{"tree/a"}) || !slices.Equal(settled.Completed.Written, []string{"tree/b/c"}) || len(settled.Completed.Deleted) != 0 {
		t.Fatalf("completed again: conflicts %v, written %v, deleted %v; want the edit left alone and the removed file written", got, settled.Completed.Written, settled.Completed.Deleted)
	}
	want := maps.Clone(c.trees[c.one])
	want["tree/a"] = testtree.Entry{Kind: "file", Content: "edited after the answer\n", Mode: want["tree/a"].Mode}
	assertSameTree(t, want, c.f.read())
}

// A restore that fails while it plans (the target's tree missing), after
// its journal's write began, changes nothing and leaves nothing pending:
// the record written meanwhile is cleared again.
func TestARestoreThatFailsWhilePlanningLeavesNoJournal(t *testing.T) {
	t.Parallel()
	f, _, two := abandonFixture(t)
	_, cp, err := f.e.resolveCheckpoint(DefaultTask, "@1")
	if err != nil {
		t.Fatal(err)
	}
	b := f.e.db.NewBatch()
	b.DeleteTree(cp.Root)
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	f.open(Options{}) // no tree cached
	if _, err := f.e.Restore(context.Background(), "@1", RestoreOptions{}); !errors.Is(err, index.ErrNotFound) || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("restore of a missing tree: %v, want it found missing, as damage", err)
	}
	f.e.syncing.Wait()
	file, err := os.ReadFile(f.e.journalPath())
	if err != nil || len(file) < journalHeader || file[3] != journalClear {
		t.Fatalf("the journal's file: %q, %v; want it written for the restore, and clear", file, err)
	}
	if f.e.PendingRestore() != nil || pendingOnDisk(t, f.store) {
		t.Fatal("a restore that failed before its first change is pending")
	}
	assertSameTree(t, two, f.read())
	f.save("after") // nothing to settle
}

// A completion within another operation (here a restore that settles the
// one interrupted before it) syncs its clearing before that operation goes
// on: the restore's own record is then written in place over a durable
// clearing.
func TestACompletionWithinAnotherOperationSyncsItsClearing(t *testing.T) {
	t.Parallel()
	f, _, _ := cancelledRestoreFixture(t, Options{})
	log := &opLog{}
	f.open(newFaultPlan(-1, 0, log.fails).options(f.store))
	res := f.restore("@2", RestoreOptions{})
	if res.Settled == nil || res.Settled.Completed == nil {
		t.Fatalf("settled %+v; want the interrupted restore completed first", res.Settled)
	}
	var ops []faultfs.OpKind // the journal file's
	for _, op := range log.taken() {
		if filepath.Base(op.Path) == journalName {
			ops = append(ops, op.Kind)
		}
	}
	last := slices.Index(ops, faultfs.OpRename) // the completion's journal, written anew
	if last < 0 || !slices.Equal(ops[last+1:], []faultfs.OpKind{
		faultfs.OpFileWrite, faultfs.OpFileSync, // the completion's clearing
		faultfs.OpFileWrite, faultfs.OpFileSync, // the restore's record, in place
		faultfs.OpFileWrite,                     // its clearing,
		faultfs.OpFileWrite, faultfs.OpFileSync, // written again and synced once it answered
	}) {
		t.Fatalf("the journal's operations: %v; want the completion's clearing synced before the restore's record", ops)
	}
}

// opLog records the operations a faultPlan is asked about, from any
// goroutine, and fails none.
type opLog struct {
	mu  sync.Mutex
	ops []faultfs.Op
}

func (l *opLog) fails(_ int, op faultfs.Op) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ops = append(l.ops, op)
	return false
}

// taken returns the operations recorded so far.
func (l *opLog) taken() []faultfs.Op {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.ops)
}
