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
	// Each with the events that would explain it but for the rule refusing it.
	for name, c := range map[string]struct {
		plan   Plan
		events []watch.Event
	}{
		"a directory made":   {Plan{mkdirs: []op{{kind: opMkdir, path: "d"}}}, []watch.Event{{Name: "d", Op: watch.OpCreated, IsDir: true}}},
		"a directory's mode": {Plan{dirModes: []op{{kind: opDirMode, path: "a"}}}, []watch.Event{{Name: "a", Op: watch.OpAttrib, IsDir: true}}},
		"a path removed and made": {Plan{removes: []op{{kind: opRemove, path: "l"}}, writes: []op{{kind: opLink, path: "l"}}},
			[]watch.Event{{Name: tmp("3"), Op: watch.OpMovedFrom, Cookie: 3}, {Name: "l", Op: watch.OpMovedTo, Cookie: 3}}},
	} {
		if c.plan.Explains(c.events) {
			t.Errorf("plan with %s: explained", name)
		}
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
