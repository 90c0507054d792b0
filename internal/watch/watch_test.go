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
