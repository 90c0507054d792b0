package watch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestNormalize(t *testing.T) {
	cases := []struct {
		dirty, rescan         []string
		wantDirty, wantRescan []string
	}{
		{[]string{"b", "a", "a"}, nil, []string{"a", "b"}, nil},
		{[]string{"a/b", "a-x", "c"}, []string{"a", "a/b/c"}, []string{"a-x", "c"}, []string{"a"}},
		{[]string{"", "x"}, []string{"y", ""}, nil, []string{""}},
		{[]string{"ab/c"}, []string{"a"}, []string{"ab/c"}, []string{"a"}},
	}
	for _, c := range cases {
		d, r := normalize(c.dirty, c.rescan)
		if !slices.Equal(d, c.wantDirty) || !slices.Equal(r, c.wantRescan) {
			t.Errorf("normalize(%q, %q) = %q, %q; want %q, %q", c.dirty, c.rescan, d, r, c.wantDirty, c.wantRescan)
		}
	}
}

// Entries names a directory's entries only while nothing else marks it:
// a mark of the directory itself, before or after, an unwatched
// directory's report, a Rescan above it, or more than MaxEntryNames names
// leave it to be re-read whole.
func TestEntriesGiveWayToWholeDirectories(t *testing.T) {
	p := newPending()
	p.markEntry("named", "a")
	p.markEntry("named", "b")
	p.markEntry("named", "a")
	p.markEntry("then-dirty", "a")
	p.markDirty("then-dirty")
	p.markDirty("dirty-first")
	p.markEntry("dirty-first", "a")
	p.markEntry("unwatched", "a")
	p.markRescan("gone", ReasonNewDir)
	p.markEntry("gone/below", "a")
	for i := range MaxEntryNames + 1 {
		p.markEntry("crowded", string(rune('a'+i)))
	}
	c := p.take([]string{"unwatched"})
	normalizeChanges(&c)
	if want := []string{"crowded", "dirty-first", "named", "then-dirty", "unwatched"}; !slices.Equal(c.Dirty, want) {
		t.Errorf("Dirty %q, want %q", c.Dirty, want)
	}
	if len(c.Entries) != 1 || !slices.Equal(c.Entries["named"], []string{"a", "b"}) {
		t.Errorf("Entries %q, want only named: a, b", c.Entries)
	}
}

func TestReasonString(t *testing.T) {
	if got := (ReasonOverflow | ReasonNewDir).String(); got != "overflow|new-dir" {
		t.Errorf("String = %q", got)
	}
	if got := ReasonClosed.String(); got != "closed" {
		t.Errorf("the last reason's String = %q", got)
	}
}

func TestCleanRel(t *testing.T) {
	for in, want := range map[string]string{"": "", ".": "", "./a/b/": "a/b", "a//b": "a/b", "/a": "a", "../a": "a"} {
		if got := cleanRel(in); got != want {
			t.Errorf("cleanRel(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestFallbackAlwaysAll is the portable backend every platform without a
// watcher uses: it vouches for nothing.
func TestFallbackAlwaysAll(t *testing.T) {
	w := &Watcher{b: &walkAlways{why: ReasonUnsupported}}
	w.Watch("a")
	for range 2 {
		if c := w.Changes(); !c.All || c.Reasons != ReasonUnsupported {
			t.Fatalf("Changes = %+v", c)
		}
	}
	w.Close()
	if c := w.Changes(); c.Reasons&ReasonClosed == 0 {
		t.Fatalf("after Close: %+v", c)
	}
}

func TestStartRejectsNonDirectory(t *testing.T) {
	f := filepath.Join(t.TempDir(), "f")
	os.WriteFile(f, nil, 0o644)
	if _, err := Start(context.Background(), f, Options{}); !errors.Is(err, ErrNotDir) {
		t.Fatalf("Start on a file: %v, want ErrNotDir", err)
	}
	if _, err := Start(context.Background(), filepath.Join(f, "missing"), Options{}); err == nil {
		t.Fatalf("Start on a missing path: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Start(ctx, t.TempDir(), Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Start with a done context: %v", err)
	}
}
