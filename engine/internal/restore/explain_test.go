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
	with := func(i int, e ...watch.Event) []watch.Event {
		out := append([]watch.Event{}, own[:i]...)
		return append(append(out, e...), own[i:]...)
	}
	without := func(i int) []watch.Event { return append(append([]watch.Event{}, own[:i]...), own[i+1:]...) }
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
		"a directory made":   {Plan{mkdirs: []op{{kind: opMkdir, path: "d"}}}, nil},
		"a directory's mode": {Plan{dirModes: []op{{kind: opDirMode, path: "a"}}}, nil},
		"a directory removed": {Plan{removes: []op{{kind: opRemoveDir, path: "d"}}},
			[]watch.Event{{Name: "d", Op: watch.OpRemoved}}},
		"a path removed and made": {Plan{removes: []op{{kind: opRemove, path: "l"}}, writes: []op{{kind: opLink, path: "l"}}},
			[]watch.Event{{Name: tmp("3"), Op: watch.OpMovedFrom, Cookie: 3}, {Name: "l", Op: watch.OpMovedTo, Cookie: 3}}},
	} {
		if c.plan.Explains(c.events) {
			t.Errorf("plan with %s: explained", name)
		}
	}
}
