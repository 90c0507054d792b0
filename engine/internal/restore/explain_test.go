package restore

import (
	"testing"

	"github.com/ckpt/ckpt/internal/watch"
)

// Explains takes exactly Apply's own events: each write's temporary file
// and its rename, each chmod, each removal, once, in any interleaving; any
// other event, a missing one, or a plan touching directories is not
// explained.
func TestExplainsOnlyApplysOwnEvents(t *testing.T) {
	tmp := func(n string) string { return tempStem + n }
	plan := Plan{
		removes: []op{{kind: opRemove, path: "a/gone.txt"}},
		writes:  []op{{kind: opWrite, path: "a/f.txt"}, {kind: opLink, path: "l"}, {kind: opChmod, path: "a/x.sh"}},
	}
	own := []watch.Event{
		{Dir: "a", Name: tmp("1"), Op: watch.OpCreated},
		{Dir: "", Name: tmp("2"), Op: watch.OpCreated},
		{Dir: "a", Name: "gone.txt", Op: watch.OpRemoved},
		{Dir: "a", Name: tmp("1"), Op: watch.OpWritten},
		{Dir: "a", Name: tmp("1"), Op: watch.OpAttrib},
		{Dir: "", Name: tmp("2"), Op: watch.OpMovedFrom, Cookie: 7},
		{Dir: "a", Name: tmp("1"), Op: watch.OpWritten},
		{Dir: "a", Name: tmp("1"), Op: watch.OpMovedFrom, Cookie: 9},
		{Dir: "", Name: "l", Op: watch.OpMovedTo, Cookie: 7},
		{Dir: "a", Name: "x.sh", Op: watch.OpAttrib},
		{Dir: "a", Name: "f.txt", Op: watch.OpMovedTo, Cookie: 9},
	}
	if !plan.Explains(own) {
		t.Fatal("Apply's own events not explained")
	}
	with := func(i int, e ...watch.Event) []watch.Event { return inserted(own, i, e...) }
	without := func(i int) []watch.Event { return inserted(own[:i], i, own[i+1:]...) }
	for name, events := range map[string][]watch.Event{
		"a write after the rename":        with(len(own), watch.Event{Dir: "a", Name: "f.txt", Op: watch.OpWritten}),
		"a write before the rename":       with(3, watch.Event{Dir: "a", Name: "f.txt", Op: watch.OpWritten}),
		"another file created":            with(5, watch.Event{Dir: "a", Name: "new.txt", Op: watch.OpCreated}),
		"a chmod of a removed file":       with(len(own), watch.Event{Dir: "a", Name: "gone.txt", Op: watch.OpAttrib}),
		"a second chmod":                  with(len(own), watch.Event{Dir: "a", Name: "x.sh", Op: watch.OpAttrib}),
		"another process's temporary":     with(1, watch.Event{Dir: "a", Name: TempPrefix + "1-1", Op: watch.OpCreated}),
		"a directory created":             with(1, watch.Event{Dir: "a", Name: "sub", Op: watch.OpCreated, IsDir: true}),
		"the directory itself changed":    with(1, watch.Event{Dir: "a", Op: watch.OpAttrib}),
		"a removal not seen":              without(2),
		"a rename not seen":               without(10),
		"a rename from someone's file":    append(without(7), watch.Event{Dir: "a", Name: "mine.txt", Op: watch.OpMovedFrom, Cookie: 9}),
		"a rename from another directory": append(without(7), watch.Event{Dir: "b", Name: tmp("1"), Op: watch.OpMovedFrom, Cookie: 9}),
		"nothing":                         nil,
	} {
		if plan.Explains(events) {
			t.Errorf("%s: explained", name)
		}
	}
	// With the events that would explain it but for the rule refusing it.
	removedAndMade := Plan{removes: []op{{kind: opRemove, path: "l"}}, writes: []op{{kind: opLink, path: "l"}}}
	if removedAndMade.Explains([]watch.Event{{Name: tmp("3"), Op: watch.OpMovedFrom, Cookie: 3}, {Name: "l", Op: watch.OpMovedTo, Cookie: 3}}) {
		t.Error("plan with a path removed and made: explained")
	}
}

// inserted returns a copy of events with more inserted before index i.
func inserted(events []watch.Event, i int, more ...watch.Event) []watch.Event {
	out := append([]watch.Event{}, events[:i]...)
	return append(append(out, more...), events[i:]...)
}

// Explains takes a directory's removal too: after the removals of what it
// held, its removal in its parent, and at most one on its own watch (which
// the kernel may report late, once the directory's last user lets it go).
// A directory whose removal its parent did not report may still stand,
// holding what the plan did not capture: not explained.
func TestExplainsDirectoriesRemoved(t *testing.T) {
	plan := Plan{removes: []op{
		{kind: opRemove, path: "old/sub/f"}, {kind: opRemoveDir, path: "old/sub"}, {kind: opRemove, path: "old/g"}, {kind: opRemoveDir, path: "old"},
	}}
	own := []watch.Event{
		{Dir: "old/sub", Name: "f", Op: watch.OpRemoved},
		{Dir: "old/sub", Op: watch.OpRemoved},
		{Dir: "old", Name: "sub", Op: watch.OpRemoved, IsDir: true},
		{Dir: "old", Name: "g", Op: watch.OpRemoved},
		{Name: "old", Op: watch.OpRemoved, IsDir: true},
	}
	with := func(i int, e ...watch.Event) []watch.Event { return inserted(own, i, e...) }
	without := func(i int) []watch.Event { return inserted(own[:i], i, own[i+1:]...) }
	if !plan.Explains(own) || !plan.Explains(without(1)) || !plan.Explains(with(5, watch.Event{Dir: "old", Op: watch.OpRemoved})) {
		t.Fatal("Apply's own events not explained")
	}
	for name, events := range map[string][]watch.Event{
		"a file dropped into the directory removed": with(1, watch.Event{Dir: "old/sub", Name: "x", Op: watch.OpCreated}),
		"the directory's removal not seen":          without(4),
		"its removal twice on its own watch":        with(2, watch.Event{Dir: "old/sub", Op: watch.OpRemoved}),
		"its removal seen as a file's":              inserted(without(4), 4, watch.Event{Name: "old", Op: watch.OpRemoved}),
		"another change on its own watch":           with(1, watch.Event{Dir: "old/sub", Op: watch.OpAttrib}),
		"a directory removed that the plan keeps":   with(5, watch.Event{Name: "kept", Op: watch.OpRemoved, IsDir: true}),
	} {
		if plan.Explains(events) {
			t.Errorf("%s: explained", name)
		}
	}
}

// Explains takes the events of directories made too: a directory's
// creation in place, or that of a fresh subtree's temporary and its one
// rename into place, with what Apply makes inside the subtree before the
// rename (each entry's creation, a file's writes and mode after it), and
// a directory's mode change in its parent (and at most one on its own
// watch). Anything else in a subtree, in a directory made, or at a
// directory's path is not explained.
func TestExplainsDirectoriesMade(t *testing.T) {
	tmp := func(n string) string { return tempStem + n }
	sub := tmp("9") // the temporary name of the fresh subtree "new"
	plan := Plan{
		mkdirs:   []op{{kind: opMkdir, path: "here"}, {kind: opMkdir, path: "new"}, {kind: opMkdir, path: "new/sub"}},
		writes:   []op{{kind: opWrite, path: "here/b"}, {kind: opWrite, path: "new/a"}, {kind: opLink, path: "new/sub/l"}},
		dirModes: []op{{kind: opDirMode, path: "new/sub"}, {kind: opDirMode, path: "new"}, {kind: opDirMode, path: "here"}},
	}
	own := []watch.Event{
		{Name: "here", Op: watch.OpCreated, IsDir: true},
		{Name: sub, Op: watch.OpCreated, IsDir: true},
		{Dir: sub, Name: "sub", Op: watch.OpCreated, IsDir: true},
		{Dir: sub, Name: "a", Op: watch.OpCreated},
		{Dir: "here", Name: tmp("5"), Op: watch.OpCreated},
		{Dir: sub, Name: "a", Op: watch.OpWritten},
		{Dir: sub + "/sub", Name: "l", Op: watch.OpCreated},
		{Dir: sub, Name: "a", Op: watch.OpAttrib},
		{Dir: "here", Name: tmp("5"), Op: watch.OpWritten},
		{Dir: "here", Name: tmp("5"), Op: watch.OpMovedFrom, Cookie: 5},
		{Dir: "here", Name: "b", Op: watch.OpMovedTo, Cookie: 5},
		{Name: sub, Op: watch.OpMovedFrom, IsDir: true, Cookie: 8},
		{Name: "new", Op: watch.OpMovedTo, IsDir: true, Cookie: 8},
		{Dir: "new", Name: "sub", Op: watch.OpAttrib, IsDir: true},
		{Dir: "new/sub", Op: watch.OpAttrib, IsDir: true},
		{Name: "new", Op: watch.OpAttrib, IsDir: true},
		{Name: "here", Op: watch.OpAttrib, IsDir: true},
		{Dir: "here", Op: watch.OpAttrib, IsDir: true},
	}
	with := func(i int, e ...watch.Event) []watch.Event { return inserted(own, i, e...) }
	without := func(i int) []watch.Event { return inserted(own[:i], i, own[i+1:]...) }
	instead := func(i int, e watch.Event) []watch.Event { return inserted(without(i), i, e) }
	end := len(own)
	if !plan.Explains(own) || !plan.Explains(with(end, watch.Event{Dir: "new", Op: watch.OpAttrib})) {
		t.Fatal("Apply's own events not explained")
	}
	for name, events := range map[string][]watch.Event{
		"a file dropped into a fresh subtree":        with(5, watch.Event{Dir: sub, Name: "x", Op: watch.OpCreated}),
		"a file of a fresh subtree removed":          with(7, watch.Event{Dir: sub, Name: "a", Op: watch.OpRemoved}),
		"a file made twice in a fresh subtree":       with(5, watch.Event{Dir: sub, Name: "a", Op: watch.OpCreated}),
		"a write before its file was made":           with(3, watch.Event{Dir: sub, Name: "a", Op: watch.OpWritten}),
		"a directory made as a file":                 instead(2, watch.Event{Dir: sub, Name: "sub", Op: watch.OpCreated}),
		"a temporary in a fresh subtree":             with(3, watch.Event{Dir: sub, Name: tmp("6"), Op: watch.OpCreated}),
		"a fresh subtree not renamed into place":     inserted(own[:11], 11, own[13:]...),
		"a fresh subtree renamed from elsewhere":     instead(11, watch.Event{Dir: "here", Name: sub, Op: watch.OpMovedFrom, IsDir: true, Cookie: 8}),
		"a directory moved in":                       instead(11, watch.Event{Dir: "elsewhere", Name: "new", Op: watch.OpMovedFrom, IsDir: true, Cookie: 8}),
		"a write in a placed subtree":                with(end, watch.Event{Dir: "new", Name: "a", Op: watch.OpWritten}),
		"a file dropped into a placed subtree":       with(end, watch.Event{Dir: "new/sub", Name: "x", Op: watch.OpCreated}),
		"a file dropped into a directory made":       with(end, watch.Event{Dir: "here", Name: "x", Op: watch.OpCreated}),
		"a directory made by someone else":           with(1, watch.Event{Dir: "here", Name: "x", Op: watch.OpCreated, IsDir: true}),
		"a directory made twice":                     with(1, watch.Event{Name: "here", Op: watch.OpCreated, IsDir: true}),
		"a directory's mode changed twice":           with(end, watch.Event{Name: "here", Op: watch.OpAttrib, IsDir: true}),
		"a directory changed twice on its own watch": with(end, watch.Event{Dir: "here", Op: watch.OpAttrib}),
		"a directory's mode change not seen":         without(16),
		"the root changed on its own watch":          with(end, watch.Event{Op: watch.OpAttrib}),
	} {
		if plan.Explains(events) {
			t.Errorf("%s: explained", name)
		}
	}
}
