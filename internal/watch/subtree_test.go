package watch

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSubtreeMarks drives the marking of whole-tree watches (Windows,
// FSEvents) with changes as those report them.
func TestSubtreeMarks(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a/b", "a/new", "node_modules/x/y"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(d)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	exclude := filepath.Join(root, ".git", "info", "exclude")
	s := newSubtreeMarks(root, Options{RuleNames: DefaultRuleNames, RuleFiles: []string{exclude}, MaxPending: 6}, true)
	for _, d := range []string{"", "a", "a/b"} {
		s.watch(d)
	}
	cases := []struct {
		kind          changeKind
		rel           string
		want          markResult
		dirty, rescan []string
	}{
		{changeModified, "a/b/f", marked, []string{"a/b"}, nil},
		{changeAdded, "a/new", marked, []string{"a"}, []string{"a/new"}},
		{changeAdded, "a/file", marked, []string{"a"}, nil},
		{changeModified, "node_modules/x/y/z.js", marked, []string{""}, nil},
		{changeModified, "A/B/f", marked, []string{"a/b"}, nil}, // case folded where names fold
		{changeModified, "a/.gitignore", marked, nil, []string{"a"}},
		{changeAdded, ".git", markedAll, nil, nil},
		{changeRenamedAway, "a/b", marked, []string{"a"}, nil},
		{changeModified, "a/b/f", staleName, nil, nil},
	}
	if foldName("A") != "A" {
		cases[4].dirty = []string{"a/b"}
	} else {
		cases[4].dirty = []string{""}
	}
	for i, c := range cases {
		p := newPending()
		if got := s.mark(&p, c.kind, c.rel); got != c.want {
			t.Fatalf("case %d (%q): result %d, want %d", i, c.rel, got, c.want)
		}
		if c.want != marked {
			continue
		}
		ch := p.take(nil)
		d, r := normalize(ch.Dirty, ch.Rescan)
		if !slices.Equal(d, c.dirty) || !slices.Equal(r, c.rescan) {
			t.Fatalf("case %d (%q): dirty %q rescan %q, want %q %q", i, c.rel, d, r, c.dirty, c.rescan)
		}
	}
	s.reset()
	for i := range 7 {
		s.watch(string(rune('p' + i)))
	}
	p := newPending()
	for i := range 7 {
		res := s.mark(&p, changeModified, string(rune('p'+i))+"/f")
		if want := i == 6; (res == overPending) != want {
			t.Fatalf("change %d into distinct directories under MaxPending 6: result %d", i, res)
		}
	}
	p.markAll(ReasonOverflow)
	if res := s.mark(&p, changeModified, "a/b/f"); res != marked {
		t.Fatalf("a change while All is pending: %d, want nothing more", res)
	}
	// A rename while All is pending is recorded all the same: a change
	// named by the old path in a later interval is stale.
	s.mark(&p, changeRenamedAway, "q")
	later := newPending()
	if res := s.mark(&later, changeModified, "q/f"); res != staleName {
		t.Fatalf("a change below a name renamed away while All was pending: %d, want a stale name", res)
	}
}

// Where the watch names changes by stale paths (Wine), every directory
// added is adrift: each interval rescans it, for the watch may report
// nothing of what changes in it, until it is gone. Where names are
// current nothing is adrift.
func TestDirectoriesAddedStayAdrift(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a/moved/sub", "a/made"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(d)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, "a", "file"), nil, 0o644)
	for _, staleNames := range []bool{true, false} {
		s := newSubtreeMarks(root, Options{}, staleNames)
		s.watch("")
		s.watch("a")
		p := newPending()
		s.mark(&p, changeRenamedAway, "b")
		s.mark(&p, changeAdded, "a/moved") // a rename within the tree
		s.mark(&p, changeAdded, "a/made")
		s.mark(&p, changeAdded, "a/file")
		p.take(nil)
		var want []string
		if staleNames {
			want = []string{"a/made", "a/moved"}
		}
		for interval := range 2 {
			later := newPending()
			s.rescanAdrift(&later)
			_, rescan := normalize(nil, later.take(nil).Rescan)
			if !slices.Equal(rescan, want) {
				t.Fatalf("stale names %v, interval %d: rescan %q, want %q", staleNames, interval, rescan, want)
			}
		}
		if err := os.Rename(filepath.Join(root, "a", "made"), filepath.Join(root, "a", "made2")); err != nil {
			t.Fatal(err)
		}
		later := newPending()
		s.rescanAdrift(&later)
		_, rescan := normalize(nil, later.take(nil).Rescan)
		if staleNames && !slices.Equal(rescan, []string{"a/moved"}) {
			t.Fatalf("after a/made went: rescan %q, want only a/moved", rescan)
		}
		if err := os.Rename(filepath.Join(root, "a", "made2"), filepath.Join(root, "a", "made")); err != nil {
			t.Fatal(err)
		}
	}
}
