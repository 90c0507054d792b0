package watch

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// TestWatchLimitLeavesDirectoriesDirty injects a watch limit below the
// directory count: the directories left unwatched are dirty at every
// Changes, and the listing kept from Changes stays exact.
func TestWatchLimitLeavesDirectoriesDirty(t *testing.T) {
	root := t.TempDir()
	seedTree(t, root, 20, 2)
	w, m := startWalked(t, root, Options{MaxWatches: 8})
	st := w.Stats()
	if st.Watches != 8 || st.Unwatched != countDirs(m.list)-8 {
		t.Fatalf("stats %+v, want 8 watches and %d unwatched", st, countDirs(m.list)-8)
	}
	var unwatched []string
	for n := range w.b.(*inotify).mu.failed {
		unwatched = append(unwatched, n.rel())
	}
	for round := range 20 {
		c := w.Changes()
		if c.All || c.Reasons&ReasonUnwatched == 0 {
			t.Fatalf("round %d: %+v, want the unwatched directories", round, c)
		}
		for _, u := range unwatched {
			if !slices.Contains(c.Dirty, u) && !underAny(u, c.Rescan) {
				t.Fatalf("round %d: unwatched %s not reported in %+v", round, u, c)
			}
		}
		if err := m.apply(c); err != nil {
			t.Fatal(err)
		}
		// A change in every directory, watched or not.
		for rel, e := range m.list {
			if e.kind == 'd' && rel != "" {
				os.WriteFile(filepath.Join(root, filepath.FromSlash(rel), "f0"), fmt.Appendf(nil, "r%d", round), 0o644)
			}
		}
		if err := m.apply(w.Changes()); err != nil {
			t.Fatal(err)
		}
		want, _ := listTree(root)
		if d := diff(m.list, want, 5); len(d) > 0 {
			t.Fatalf("round %d: %v", round, d)
		}
	}
}

// TestUnmountRescans mounts a file system on a watched directory, watches
// a directory inside it, and unmounts it: the kernel drops that watch and
// the directory is reported for a rescan.
func TestUnmountRescans(t *testing.T) {
	root := t.TempDir()
	seedTree(t, root, 2, 1)
	mnt := filepath.Join(root, "d1", "e1")
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("mounting needs CAP_SYS_ADMIN: %v", err)
	}
	mounted := true
	defer func() {
		if mounted {
			unix.Unmount(mnt, unix.MNT_DETACH)
		}
	}()
	if err := os.Mkdir(filepath.Join(mnt, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	w, m := startWalked(t, root, Options{})
	if _, ok := m.list["d1/e1/in"]; !ok {
		t.Fatal("the mounted directory was not listed")
	}
	if err := unix.Unmount(mnt, 0); err != nil {
		t.Fatal(err)
	}
	mounted = false
	c := w.Changes()
	if c.All || !underAny("d1/e1", c.Rescan) || c.Reasons&ReasonDropped == 0 {
		t.Fatalf("after unmount: %+v, want a rescan of d1/e1", c)
	}
	if err := m.apply(c); err != nil {
		t.Fatal(err)
	}
	want, _ := listTree(root)
	if d := diff(m.list, want, 5); len(d) > 0 {
		t.Fatal(d)
	}
}

// TestBindMountedTwiceStaysDirty bind-mounts one directory onto another:
// both paths share an inode, hence a kernel watch whose events name only
// one of them, so the other is reported dirty at every Changes.
func TestBindMountedTwiceStaysDirty(t *testing.T) {
	root := t.TempDir()
	seedTree(t, root, 2, 1)
	src, dst := filepath.Join(root, "d0", "e0"), filepath.Join(root, "d1", "e1")
	if err := unix.Mount(src, dst, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("mounting needs CAP_SYS_ADMIN: %v", err)
	}
	defer unix.Unmount(dst, unix.MNT_DETACH)
	w, m := startWalked(t, root, Options{})
	if st := w.Stats(); st.Unwatched != 1 {
		t.Fatalf("stats %+v, want one directory unwatched", st)
	}
	for i := range 3 {
		os.WriteFile(filepath.Join(dst, "f0"), []byte{byte(i)}, 0o644)
		c := w.Changes()
		if !slices.Contains(c.Dirty, "d0/e0") || !slices.Contains(c.Dirty, "d1/e1") {
			t.Fatalf("write %d through the bind mount: %+v, want both paths dirty", i, c)
		}
		if err := m.apply(c); err != nil {
			t.Fatal(err)
		}
	}
}

// backendDone is closed when w's reader goroutine has returned.
func backendDone(w *Watcher) <-chan struct{} { return w.b.(*inotify).done }

// TestWrittenHearsOfFilesAsTheyChange: Options.Written is told of a file
// written in place, one created and one moved into place, by their
// paths, and of no directory nor a change of mode alone. Changes drains
// the queue, so every event of the operations before it has been heard.
func TestWrittenHearsOfFilesAsTheyChange(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a", "a/sub"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"top", "a/f", "a/g"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("v1"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	heard := map[string]bool{}
	w, _ := startWalked(t, root, Options{Written: func(rel string) {
		mu.Lock()
		heard[rel] = true
		mu.Unlock()
	}})
	at := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	for _, step := range []error{
		os.WriteFile(at("top"), []byte("v2"), 0o644),
		os.WriteFile(at("a/f"), []byte("v2"), 0o644),
		os.WriteFile(at("a/sub/.tmp"), []byte("new"), 0o644),
		os.Rename(at("a/sub/.tmp"), at("a/sub/moved")),
		os.Mkdir(at("a/d2"), 0o755),
		os.Chmod(at("a/g"), 0o600),
	} {
		if step != nil {
			t.Fatal(step)
		}
	}
	w.Changes()
	mu.Lock()
	defer mu.Unlock()
	want := map[string]bool{"top": true, "a/f": true, "a/sub/.tmp": true, "a/sub/moved": true}
	if !maps.Equal(heard, want) {
		t.Fatalf("Written heard %v, want %v", slices.Sorted(maps.Keys(heard)), slices.Sorted(maps.Keys(want)))
	}
}

// TestEntriesNameTheChangedFiles: writes, creations, removals, renames
// and chmods of files name those files in Entries (a new hard link is the
// blind spot the package's documentation gives, names or not); a
// directory's own change, a subdirectory's, or more names than
// MaxEntryNames leave the directory dirty whole.
func TestEntriesNameTheChangedFiles(t *testing.T) {
	root := t.TempDir()
	seedTree(t, root, 10, 3)
	w, m := startWalked(t, root, Options{})
	at, must := treeHelpers(t, root)
	check := func(what string, wantDirty, wantRescan []string, wantEntries map[string][]string) {
		t.Helper()
		c := w.Changes()
		if c.All || !slices.Equal(c.Dirty, wantDirty) || !slices.Equal(c.Rescan, wantRescan) || !maps.EqualFunc(c.Entries, wantEntries, slices.Equal) {
			t.Fatalf("%s: %+v, want Dirty %q, Rescan %q and Entries %q", what, c, wantDirty, wantRescan, wantEntries)
		}
		must(m.apply(c))
		want, err := listTree(root)
		must(err)
		if d := diff(m.list, want, 5); len(d) > 0 {
			t.Fatalf("%s: the mirror, re-reading only what Changes names, differs: %q", what, d)
		}
	}

	must(os.WriteFile(at("d1/e1/f0"), []byte("edited"), 0o644))
	must(os.WriteFile(at("d1/e1/new"), []byte("new"), 0o644))
	must(os.Remove(at("d2/e2/f1")))
	must(os.Chmod(at("d3/e3/f2"), 0o755))
	check("write, create, remove, chmod", []string{"d1/e1", "d2/e2", "d3/e3"}, nil,
		map[string][]string{"d1/e1": {"f0", "new"}, "d2/e2": {"f1"}, "d3/e3": {"f2"}})

	must(os.Rename(at("d1/e1/new"), at("d4/e4/moved")))
	must(os.Symlink("f0", at("d0/e5/link")))
	check("rename across directories, symlink", []string{"d0/e5", "d1/e1", "d4/e4"}, nil,
		map[string][]string{"d0/e5": {"link"}, "d1/e1": {"new"}, "d4/e4": {"moved"}})

	must(os.WriteFile(at("d2/e7/f0"), []byte("x"), 0o644))
	must(os.Chmod(at("d2/e7"), 0o700))
	must(os.WriteFile(at("d3/e8/f0"), []byte("x"), 0o644))
	must(os.Mkdir(at("d3/e8/sub"), 0o755))
	for i := range MaxEntryNames + 1 {
		must(os.WriteFile(at(fmt.Sprintf("d4/e9/n%d", i)), nil, 0o644))
	}
	check("the directory's own chmod, a new subdirectory, too many names", []string{"d2", "d2/e7", "d3/e8", "d4/e9"}, []string{"d3/e8/sub"}, nil)
}

// treeHelpers gives the absolute path of a root-relative name under root,
// and a check that fails the test on an error.
func treeHelpers(t *testing.T, root string) (at func(rel string) string, must func(error)) {
	at = func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	must = func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	return at, must
}
