package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ckpt/ckpt/internal/faultfs"
	"github.com/ckpt/ckpt/internal/testtree"
)

// cancelledRestoreFixture saves @1 and @2 of a 60-file workspace, then
// restores @1 with a context cancelled at the restore's tenth file
// creation: the journal is left pending, the workspace half restored.
func cancelledRestoreFixture(t *testing.T, opts Options) (f *fixture, one, two *SaveResult) {
	return cancelledRestoreOf(t, opts, RestoreOptions{})
}

// cancelledRestoreOf is cancelledRestoreFixture with the restore to @1
// made with ropts (limited to some paths, say).
func cancelledRestoreOf(t *testing.T, opts Options, ropts RestoreOptions) (f *fixture, one, two *SaveResult) {
	tree := testtree.Dir{}
	for i := 0; i < 60; i++ {
		tree[fmt.Sprintf("f%02d", i)] = testtree.File{Content: fmt.Sprintf("v1 %d\n", i)}
	}
	f = newFixture(t, tree)
	one = f.save("v1")
	for i := 0; i < 60; i++ {
		f.write(fmt.Sprintf("f%02d", i), fmt.Sprintf("v2 %d\n", i))
	}
	two = f.save("v2")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	creates := 0
	plan := newFaultPlan(-1, 0, func(_ int, op faultfs.Op) bool {
		if op.Kind == faultfs.OpCreate {
			if creates++; creates == 10 {
				cancel()
			}
		}
		return false
	})
	faulty := plan.options(f.store)
	opts.hooks.wrapRestoreFS, opts.hooks.storeFS = faulty.hooks.wrapRestoreFS, faulty.hooks.storeFS
	f.open(opts)
	if _, err := f.e.Restore(ctx, "@1", ropts); !errors.Is(err, context.Canceled) {
		t.Fatalf("restore: %v, want it cancelled", err)
	}
	if f.e.PendingRestore() == nil {
		t.Fatal("a cancelled restore left no pending journal")
	}
	return f, one, two
}

// The engine that saw its restore cancelled completes it at its next
// write, says so in that write's result and an event, and later saves are
// never undone by a replay of that journal.
func TestCancelledRestoreIsCompletedBeforeTheNextSave(t *testing.T) {
	t.Parallel()
	var events []Event
	f, one, _ := cancelledRestoreFixture(t, Options{OnEvent: func(ev Event) { events = append(events, ev) }})
	events = nil
	res := f.save("after the cancelled restore")
	if res.Settled == nil || res.Settled.Completed == nil || res.Settled.Completed.Restored != one.ID {
		t.Fatalf("save settled %+v, want the restore to @1 completed first", res.Settled)
	}
	if len(events) < 2 || events[0].Type != EventRestore || !events[0].Resumed || events[0].Commit != one.ID {
		t.Fatalf("events %+v, want a resumed restore of @1 first", events)
	}
	if got := f.readFile("f39"); got != "v1 39\n" {
		t.Fatalf("f39 = %q after completion, want @1's", got)
	}
	f.write("f39", "newer work\n")
	four := f.save("newer work")
	if !four.Created {
		t.Fatal("the edit after completion was not saved")
	}
	want := f.read()

	// The next process finds nothing to replay.
	f.open(Options{})
	if f.e.PendingRestore() != nil {
		t.Fatal("the journal outlived its completion")
	}
	again := f.save("again")
	if again.Settled != nil || again.ID != four.ID {
		t.Fatalf("next save: settled %+v, head %s; want nothing settled, head %s", again.Settled, again.ID.Short(), four.ID.Short())
	}
	assertSameTree(t, want, f.read())
}

// A journal whose task moved on after it was written (left by an engine
// that kept saving over it) is discarded with a warning, never replayed:
// the head and the newer work stay.
func TestJournalIsNeverReplayedOverANewerHead(t *testing.T) {
	t.Parallel()
	for _, legacy := range []bool{false, true} {
		t.Run(fmt.Sprintf("legacy=%v", legacy), func(t *testing.T) {
			t.Parallel()
			f, _, _ := cancelledRestoreFixture(t, Options{})
			stale, err := os.ReadFile(f.e.journalPath())
			if err != nil {
				t.Fatal(err)
			}
			staleName := journalName
			if legacy { // an older version's, written before journals recorded the head
				staleName = legacyJournalName
				rec, pending, err := journalRecord(stale)
				if err != nil || !pending {
					t.Fatalf("journal of the cancelled restore: pending %v, %v", pending, err)
				}
				var m map[string]any
				if err := json.Unmarshal(rec, &m); err != nil {
					t.Fatal(err)
				}
				delete(m, "head")
				if stale, err = json.Marshal(m); err != nil {
					t.Fatal(err)
				}
			}
			f.save("completes it")
			f.write("f39", "newer work\n")
			newer := f.save("newer work")
			want := f.read()
			// The stale journal is back, as an engine that never settled
			// it would have left it.
			f.e.Close()
			if err := os.WriteFile(filepath.Join(f.store, staleName), stale, 0o600); err != nil {
				t.Fatal(err)
			}
			var events []Event
			f.open(Options{OnEvent: func(ev Event) { events = append(events, ev) }})
			res := f.save("after")
			if res.Settled == nil || res.Settled.Discarded == "" || res.Settled.Completed != nil {
				t.Fatalf("save settled %+v, want the stale journal discarded", res.Settled)
			}
			if res.ID != newer.ID {
				t.Fatalf("head %s after settling, want %s kept", res.ID.Short(), newer.ID.Short())
			}
			assertSameTree(t, want, f.read())
			warned := false
			for _, ev := range events {
				warned = warned || (ev.Type == EventWarning && ev.Message != "")
				if ev.Type == EventRestore {
					t.Fatalf("a restore event %+v for a discarded journal", ev)
				}
			}
			if !warned {
				t.Fatalf("events %+v, want a warning", events)
			}
			if pendingOnDisk(t, f.store) {
				t.Fatal("journal still pending")
			}
		})
	}
}

// A restore to the pending restore's target resumes it (no second backup,
// nothing settled first); a restore elsewhere settles it first.
func TestRestoreResumesOrSettlesThePendingOne(t *testing.T) {
	t.Parallel()
	f, _, _ := cancelledRestoreFixture(t, Options{})
	j := f.e.PendingRestore()
	res := f.restore("@1", RestoreOptions{})
	if res.Settled != nil || res.Backup != j.Backup {
		t.Fatalf("restore to the same target: settled %+v, backup %s; want a resume with the journal's backup %s",
			res.Settled, res.Backup.Short(), j.Backup.Short())
	}

	f2, one, _ := cancelledRestoreFixture(t, Options{})
	res = f2.restore("@2", RestoreOptions{})
	if res.Settled == nil || res.Settled.Completed == nil || res.Settled.Completed.Restored != one.ID {
		t.Fatalf("restore elsewhere settled %+v, want the pending restore to @1 completed first", res.Settled)
	}
	if got := f2.readFile("f39"); got != "v2 39\n" {
		t.Fatalf("f39 = %q, want @2's", got)
	}
}
