package walker

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// A replayed directory is not listed: its entries are those Replay gave,
// except that its symlinks and the subdirectories it descends into are
// lstatted again: one gone since is left out, one replaced is taken as it
// is now. Its pattern files still apply below it.
func TestReplay(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"r/keep/deep", "r/gone", "r/quiet", "r/became"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range map[string]string{"r/.gitignore": "*.log\n", "r/f": "f", "r/keep/deep/x.log": "ignored", "r/keep/deep/y": "y"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := symlinksWork(t)
	if links {
		if err := os.Symlink("old", filepath.Join(root, "r", "link")); err != nil {
			t.Fatal(err)
		}
	}
	opts := Options{Profile: "none"}
	recorded := walkListings(t, root, opts)["r"]

	// Changes Replay's caller would have been told about, made anyway.
	if err := os.WriteFile(filepath.Join(root, "r", "unseen"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "r", "gone")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "r", "became")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "r", "became"), []byte("a file now"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "r", "keep"), 0o700); err != nil {
		t.Fatal(err)
	}
	keepMode := uint32(0o700)
	if runtime.GOOS == "windows" { // no permission bits: a directory is always 0755 (see Entry)
		keepMode = 0o755
	}
	if links {
		if err := os.Remove(filepath.Join(root, "r", "link")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("new", filepath.Join(root, "r", "link")); err != nil {
			t.Fatal(err)
		}
	}

	opts.Prune = func(rel string) bool { return rel == "r/quiet" }
	opts.Replay = func(rel string) ([]Entry, []string, bool) { return slices.Clone(recorded), nil, rel == "r" }
	var mu2 sync.Mutex
	got := map[string]*Dir{}
	_, _, err := Walk(context.Background(), root, opts, func(_ context.Context, d *Dir, _ map[string]string) (string, error) {
		mu2.Lock()
		c := *d
		c.Entries = slices.Clone(d.Entries)
		got[d.Path] = &c
		mu2.Unlock()
		return "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r := got["r"]
	if !r.Replayed || got[""].Replayed || got["r/keep"].Replayed {
		t.Fatalf("replayed: root %v, r %v, r/keep %v; want only r", got[""].Replayed, r.Replayed, got["r/keep"].Replayed)
	}
	var names []string
	for _, e := range r.Entries {
		names = append(names, e.Name)
		switch e.Name {
		case "became":
			if e.Kind != KindFile || e.Size != int64(len("a file now")) {
				t.Errorf("a directory replaced by a file since: %+v, want the file as it is now", e)
			}
		case "link":
			if e.Target != "new" {
				t.Errorf("replayed symlink target %q, want it read again (new)", e.Target)
			}
		case "keep":
			if e.Mode != keepMode || got["r/keep"].Mode != keepMode {
				t.Errorf("descended subdirectory mode %o (its Dir %o), want it lstatted again (%o)", e.Mode, got["r/keep"].Mode, keepMode)
			}
		}
	}
	want := []string{".gitignore", "became", "f", "keep", "link", "quiet"}
	if !links {
		want = slices.DeleteFunc(want, func(n string) bool { return n == "link" })
	}
	if !slices.Equal(names, want) {
		t.Errorf("replayed entries %q, want %q (the recorded ones, gone subdirectory left out)", names, want)
	}
	if !got["r/quiet"].Pruned {
		t.Error("r/quiet was not pruned below a replayed directory")
	}
	var deep []string
	for _, e := range got["r/keep/deep"].Entries {
		deep = append(deep, e.Name)
	}
	if strings.Join(deep, " ") != "y" {
		t.Errorf("r/keep/deep lists %q, want the replayed directory's .gitignore applied (y)", deep)
	}
}

// A replayed directory's changed names are looked up again, as a listing
// would find them: written, created, removed, ignored; every other entry
// is the recorded one, even one changed since (the caller vouches it was
// not).
func TestReplayLooksUpChangedNames(t *testing.T) {
	root := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, "r", name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(root, "r"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{".gitignore": "*.log\n", "edited": "1", "gone": "2", "same": "3", "unnamed": "4"} {
		write(name, data)
	}
	opts := Options{Profile: "none"}
	recorded := walkListings(t, root, opts)["r"]

	write("edited", "longer now")
	write("added", "5")
	write("build.log", "ignored")
	write("unnamed", "changed, not named")
	if err := os.Remove(filepath.Join(root, "r", "gone")); err != nil {
		t.Fatal(err)
	}
	changed := []string{"added", "build.log", "edited", "gone", "never-there"}
	opts.Replay = func(rel string) ([]Entry, []string, bool) { return slices.Clone(recorded), changed, rel == "r" }
	sizes := map[string]int64{}
	var names []string
	for _, e := range walkListings(t, root, opts)["r"] {
		names = append(names, e.Name)
		sizes[e.Name] = e.Size
	}
	if want := []string{".gitignore", "added", "edited", "same", "unnamed"}; !slices.Equal(names, want) {
		t.Fatalf("replayed entries %q, want %q", names, want)
	}
	if sizes["edited"] != int64(len("longer now")) || sizes["added"] != 1 || sizes["unnamed"] != 1 {
		t.Errorf("sizes %v: want edited and added as they are now, unnamed as recorded", sizes)
	}
}

// walkListings walks root and returns each directory's entries.
func walkListings(t *testing.T, root string, opts Options) map[string][]Entry {
	t.Helper()
	var mu sync.Mutex
	listed := map[string][]Entry{}
	record := func(_ context.Context, d *Dir, _ map[string]string) (string, error) {
		mu.Lock()
		listed[d.Path] = slices.Clone(d.Entries)
		mu.Unlock()
		return "", nil
	}
	if _, _, err := Walk(context.Background(), root, opts, record); err != nil {
		t.Fatal(err)
	}
	return listed
}
