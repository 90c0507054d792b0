package walker

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// A pruned directory is visited once, with Pruned set and no entries, and
// nothing below it is opened or visited; its value reaches its parent.
func TestPrune(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a/x/y", "b/z", "c"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, d, "f"), []byte(d), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var visited []string
	opts := Options{Profile: "none", Prune: func(rel string) bool { return rel == "a" || rel == "b/z" }}
	got, _, err := Walk(context.Background(), root, opts, func(_ context.Context, d *Dir, sub map[string]string) (string, error) {
		mu.Lock()
		visited = append(visited, d.Path)
		mu.Unlock()
		if d.Pruned != (d.Path == "a" || d.Path == "b/z") || d.Pruned && d.Entries != nil {
			t.Errorf("%q: pruned %v with %d entries", d.Path, d.Pruned, len(d.Entries))
		}
		if d.Pruned {
			return "P", nil
		}
		v := "("
		for _, e := range d.Entries {
			v += e.Name
			if e.Kind == KindDir {
				v += sub[e.Name]
			}
			v += " "
		}
		return v + ")", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(visited)
	if want := []string{"", "a", "b", "b/z", "c"}; !slices.Equal(visited, want) {
		t.Errorf("visited %q, want %q", visited, want)
	}
	if want := "(aP b(zP ) c(f ) )"; got != want {
		t.Errorf("root value %q, want %q", got, want)
	}
}
