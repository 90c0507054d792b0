package watch

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAuditRecordsEveryEventInOrder: an audit holds each event of the
// operations between StartAudit and End, in order, with a rename's two
// halves sharing a cookie; the changes before StartAudit come back from it
// and those of the audit from End, and the next Changes has nothing of
// either.
func TestAuditRecordsEveryEventInOrder(t *testing.T) {
	root := t.TempDir()
	seedTree(t, root, 5, 3)
	w, _ := startWalked(t, root, Options{})
	at, must := treeHelpers(t, root)
	must(os.WriteFile(at("d0/e0/f0"), []byte("before the audit"), 0o644))
	a, before := w.StartAudit()
	if a == nil {
		t.Fatal("no audit from the inotify backend")
	}
	if !slices.Equal(before.Dirty, []string{"d0/e0"}) {
		t.Fatalf("changes before the audit: %+v, want d0/e0", before)
	}
	must(os.WriteFile(at("d1/e1/tmp"), []byte("new content"), 0o600))
	must(os.Rename(at("d1/e1/tmp"), at("d1/e1/f0")))
	must(os.Remove(at("d2/e2/f1")))
	must(os.Chmod(at("d3/e3/f2"), 0o755))
	events, complete, c := a.End()
	if !complete {
		t.Fatal("audit incomplete")
	}
	if !slices.Equal(c.Dirty, []string{"d1/e1", "d2/e2", "d3/e3"}) || len(c.Rescan) > 0 || c.All {
		t.Fatalf("changes of the audit: %+v", c)
	}
	var got []string
	cookies := map[string]uint32{}
	for _, e := range events {
		got = append(got, fmt.Sprintf("%s/%s %d", e.Dir, e.Name, e.Op))
		if e.Op == OpMovedFrom || e.Op == OpMovedTo {
			cookies[e.Name] = e.Cookie
		}
	}
	want := []string{
		fmt.Sprintf("d1/e1/tmp %d", OpCreated), fmt.Sprintf("d1/e1/tmp %d", OpWritten), fmt.Sprintf("d1/e1/tmp %d", OpWritten),
		fmt.Sprintf("d1/e1/tmp %d", OpMovedFrom), fmt.Sprintf("d1/e1/f0 %d", OpMovedTo),
		fmt.Sprintf("d2/e2/f1 %d", OpRemoved), fmt.Sprintf("d3/e3/f2 %d", OpAttrib),
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	if cookies["tmp"] == 0 || cookies["tmp"] != cookies["f0"] {
		t.Fatalf("rename cookies %v, want one shared non-zero cookie", cookies)
	}
	if c := w.Changes(); len(c.Dirty) > 0 || c.All {
		t.Fatalf("changes after the audit: %+v, want none", c)
	}
	must(os.WriteFile(at("d4/e4/f0"), []byte("after"), 0o644))
	if c := w.Changes(); !slices.Equal(c.Dirty, []string{"d4/e4"}) || len(a.log.events) != len(events) { // Changes drained the write
		t.Fatalf("after the audit: changes %+v, %d events recorded where it ended with %d; want the write reported, not recorded", c, len(a.log.events), len(events))
	}
}

// TestAuditOverflowIsIncomplete: an audit during which the watcher lost
// events (its MaxPending bound exceeded, handled as a queue overflow) says
// so, and so does one with more events than it keeps.
func TestAuditOverflowIsIncomplete(t *testing.T) {
	root := t.TempDir()
	seedTree(t, root, 5, 1)
	w, _ := startWalked(t, root, Options{MaxPending: 2})
	a, _ := w.StartAudit()
	for i := range 5 {
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("d%d", i), fmt.Sprintf("e%d", i), "f0"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, complete, c := a.End(); complete || !c.All {
		t.Fatalf("after an overflow: complete %v, changes %+v; want incomplete and All", complete, c)
	}

	w, _ = startWalked(t, root, Options{})
	a, _ = w.StartAudit()
	for i := range maxAuditEvents / 2 { // a creation and a close each
		if err := os.WriteFile(filepath.Join(root, "d0", "e0", fmt.Sprintf("n%d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(filepath.Join(root, "d0", "e0", "n0")); err != nil {
		t.Fatal(err)
	}
	if events, complete, _ := a.End(); complete || len(events) != maxAuditEvents {
		t.Fatalf("after %d new files and a removal: complete %v with %d events; want incomplete with %d", maxAuditEvents/2, complete, len(events), maxAuditEvents)
	}
}

// TestAuditRecordsDirectoriesRemoved: a watched directory removed during
// an audit (its file, then itself) leaves the audit complete, with the
// directory's deletion on its own watch and in its parent, and not the end
// of its watch, which the kernel reports after.
func TestAuditRecordsDirectoriesRemoved(t *testing.T) {
	root := t.TempDir()
	seedTree(t, root, 5, 1)
	w, _ := startWalked(t, root, Options{})
	at, must := treeHelpers(t, root)
	a, _ := w.StartAudit()
	must(os.Remove(at("d1/e1/f0")))
	must(os.Remove(at("d1/e1")))
	events, complete, c := a.End()
	if !complete {
		t.Fatal("audit incomplete")
	}
	if !slices.Equal(c.Dirty, []string{"d1", "d1/e1"}) || len(c.Rescan) > 0 || c.All {
		t.Fatalf("changes of the audit: %+v", c)
	}
	want := []string{fmt.Sprintf("d1/e1:f0 %d false", OpRemoved), fmt.Sprintf("d1/e1: %d", OpRemoved), fmt.Sprintf("d1:e1 %d true", OpRemoved)}
	if got := eventList(events); !slices.Equal(got, want) {
		t.Fatalf("events\n%q, want\n%q", got, want)
	}
}

// eventList describes each event as "dir:name op", with whether it is a
// directory for an event about an entry.
func eventList(events []Event) []string {
	var out []string
	for _, e := range events {
		if e.Name == "" {
			out = append(out, fmt.Sprintf("%s: %d", e.Dir, e.Op))
		} else {
			out = append(out, fmt.Sprintf("%s:%s %d %v", e.Dir, e.Name, e.Op, e.IsDir))
		}
	}
	return out
}

// The watches of deleted directories are remembered only until the kernel
// ends them: after a subtree is removed, and after a watch whose end came
// while it was still mapped (its IN_IGNORED before any deletion was heard
// of), none is left, and the watches below the ended one are removed.
func TestEndedWatchesAreForgotten(t *testing.T) {
	root := t.TempDir()
	seedTree(t, root, 5, 3)
	w, _ := startWalked(t, root, Options{})
	b, ok := w.b.(*inotify)
	if !ok {
		t.Fatalf("backend %T, want inotify", w.b)
	}
	at, must := treeHelpers(t, root)
	ended := func() int {
		b.mu.Lock()
		defer b.mu.Unlock()
		return len(b.mu.ended)
	}
	// Removed: rmdir queues each watch's IN_DELETE_SELF and IN_IGNORED
	// before it returns, and Changes reads the queue to its end.
	must(os.RemoveAll(at("d1")))
	if c := w.Changes(); !slices.Contains(c.Dirty, "") || c.All {
		t.Fatalf("changes %+v after removing d1, want the root dirty", c)
	}
	if n := ended(); n != 0 {
		t.Fatalf("%d ended watches remembered after the subtree's removal", n)
	}
	// Ended while mapped: d0, with d0/e0 below it.
	b.mu.Lock()
	wds := map[string]int32{}
	for id, n := range b.mu.wds {
		wds[n.rel()] = id
	}
	if wds["d0"] == 0 || wds["d0/e0"] == 0 {
		b.mu.Unlock()
		t.Fatalf("watches %v, want d0 and d0/e0", wds)
	}
	b.eventLocked(wds["d0"], unix.IN_IGNORED, 0, "")
	_, still := b.mu.wds[wds["d0"]]
	_, below := b.mu.wds[wds["d0/e0"]]
	b.mu.Unlock()
	if still || below {
		t.Fatalf("after d0's watch ended: d0 mapped %v, d0/e0 mapped %v", still, below)
	}
	if n := ended(); n != 0 {
		t.Fatalf("%d ended watches remembered after an IN_IGNORED of a mapped watch", n)
	}
	// d0/e0's kernel watch was removed: its own IN_IGNORED, which
	// Changes reads, comes from a watch no longer mapped.
	if c := w.Changes(); !slices.Contains(c.Rescan, "d0") {
		t.Fatalf("changes %+v, want d0 rescanned", c)
	}
}
