package watch

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/windows"
)

// backendDone is closed when w's I/O thread has returned.
func backendDone(w *Watcher) <-chan struct{} { return w.b.(*rdcw).done }

func mustChanges(t *testing.T, w *Watcher, what string, dirty, rescan []string) {
	t.Helper()
	c := w.Changes()
	if c.All || !slices.Equal(c.Dirty, dirty) || !slices.Equal(c.Rescan, rescan) {
		t.Fatalf("%s: %+v, want dirty %q, rescan %q", what, c, dirty, rescan)
	}
}

// TestRenamesDirtyBothDirectories: a rename reports the old and the new
// name; both directories are dirty, and a directory renamed is a Rescan
// at its new path, where its contents are watched again once read.
func TestRenamesDirtyBothDirectories(t *testing.T) {
	root := t.TempDir()
	seedTree(t, root, 10, 1)
	w, m := startWalked(t, root, Options{})
	at := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	if err := os.Rename(at("d1/e1/f0"), at("d2/e2/moved")); err != nil {
		t.Fatal(err)
	}
	mustChanges(t, w, "file renamed across directories", []string{"d1/e1", "d2/e2"}, nil)
	if err := os.Rename(at("d3/e3"), at("d4/e3b")); err != nil {
		t.Fatal(err)
	}
	c := w.Changes()
	if !slices.Equal(c.Dirty, []string{"d3", "d4"}) || !slices.Equal(c.Rescan, []string{"d4/e3b"}) {
		t.Fatalf("directory renamed: %+v, want d3 and d4 dirty and d4/e3b rescanned", c)
	}
	if err := m.apply(c); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(at("d4/e3b/f0"), []byte("x"), 0o644)
	if c := w.Changes(); !c.All && !slices.Equal(c.Dirty, []string{"d4/e3b"}) {
		t.Fatalf("write in the renamed directory: %+v, want d4/e3b dirty (or All, see TestRenamedDirectoryStaysExact)", c)
	}
}

// TestDirectoriesMovedInAndOut: a tree moved in arrives with contents the
// events never named (Rescan); one moved out leaves its parent dirty and
// reports nothing more.
func TestDirectoriesMovedInAndOut(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	seedTree(t, root, 5, 1)
	w, m := startWalked(t, root, Options{})
	if err := os.MkdirAll(filepath.Join(outside, "tree", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(outside, "tree", "sub", "f"), nil, 0o644)
	if err := os.Rename(filepath.Join(outside, "tree"), filepath.Join(root, "d1", "in")); err != nil {
		t.Fatal(err)
	}
	c := w.Changes()
	if !slices.Equal(c.Dirty, []string{"d1"}) || !slices.Equal(c.Rescan, []string{"d1/in"}) {
		t.Fatalf("tree moved in: %+v, want d1 dirty and d1/in rescanned", c)
	}
	if err := m.apply(c); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(root, "d1", "in"), filepath.Join(outside, "back")); err != nil {
		t.Fatal(err)
	}
	mustChanges(t, w, "tree moved out", []string{"d1"}, nil)
	os.WriteFile(filepath.Join(outside, "back", "sub", "f"), []byte("x"), 0o644)
	// Windows reports nothing more; Wine reports the write under the
	// tree's old path, which is then ambiguous (see staleLocked).
	if c := w.Changes(); len(c.Dirty)+len(c.Rescan) > 0 || c.All && c.Reasons&ReasonDropped == 0 {
		t.Fatalf("write in the tree moved out: %+v, want nothing, or All for a stale name", c)
	}
}

// TestRenamedDirectoryStaysExact renames a directory the caller read, then
// creates a directory at its old name, then writes in both: each write
// dirties its own directory, or, where the system names changes by stale
// paths (Wine), the ambiguity is an All, never a miss.
func TestRenamedDirectoryStaysExact(t *testing.T) {
	root := t.TempDir()
	seedTree(t, root, 5, 1)
	w, m := startWalked(t, root, Options{})
	at := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	if err := os.Rename(at("d1/e1"), at("d2/moved")); err != nil {
		t.Fatal(err)
	}
	if err := m.apply(w.Changes()); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(at("d1/e1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := m.apply(w.Changes()); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"d2/moved", "d1/e1", "d2/moved"} {
		os.WriteFile(at(dir+"/new"), []byte(dir), 0o644)
		c := w.Changes()
		if !c.All && !slices.Contains(c.Dirty, dir) && !underAny(dir, c.Rescan) {
			t.Fatalf("write in %s: %+v", dir, c)
		}
		if err := m.apply(c); err != nil {
			t.Fatal(err)
		}
		want, _ := listTree(root)
		if d := diff(m.list, want, 5); len(d) > 0 {
			t.Fatalf("after the write in %s: %v", dir, d)
		}
	}
}

// TestBufferOverflowReportsAll holds the I/O thread off while more
// changes happen than the read buffer holds: the system reports the loss
// (ERROR_NOTIFY_ENUM_DIR, or an empty read) and the next Changes is All;
// after the walk that follows, reports are precise again.
func TestBufferOverflowReportsAll(t *testing.T) {
	defer func(n int) { notifyBufSize = n }(notifyBufSize)
	notifyBufSize = 256
	root := t.TempDir()
	seedTree(t, root, 5, 1)
	w, m := startWalked(t, root, Options{})
	b := w.b.(*rdcw)
	b.mu.Lock()
	for i := range 40 {
		os.WriteFile(filepath.Join(root, "d1", "e1", "new"+string(rune('a'+i%26))+string(rune('a'+i/26))), nil, 0o644)
	}
	b.mu.Unlock()
	c := w.Changes()
	if !c.All || c.Reasons&ReasonOverflow == 0 || w.Stats().Overflows == 0 {
		t.Fatalf("after 40 creates into a 256-byte buffer: %+v, %+v; want All for an overflow", c, w.Stats())
	}
	if err := m.apply(c); err != nil {
		t.Fatal(err)
	}
	m.apply(w.Changes())
	os.WriteFile(filepath.Join(root, "d2", "e2", "f0"), []byte("x"), 0o644)
	mustChanges(t, w, "after the walk that followed the overflow", []string{"d2/e2"}, nil)
}

// TestEventsInUnreadTreesDirtyTheNearestReadDirectory: changes in an
// ignored tree (never passed to Watch) dirty only the directory above it
// that the caller reads, so a package install costs a re-read of one
// directory, not one per directory it writes.
func TestEventsInUnreadTreesDirtyTheNearestReadDirectory(t *testing.T) {
	root := t.TempDir()
	seedTree(t, root, 5, 1)
	w, _ := startWalked(t, root, Options{})
	deep := filepath.Join(root, "node_modules", "pkg", "lib", "x")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(deep, "index.js"), nil, 0o644)
	// Wine watches a directory below the root only once a program opens
	// it, so there nothing at all is reported.
	if c := w.Changes(); c.All || len(c.Rescan) > 0 || len(c.Dirty) > 0 && !slices.Equal(c.Dirty, []string{""}) {
		t.Fatalf("writes below node_modules: %+v, want at most the root dirty", c)
	}
}

// TestEventNamesResolveCaseAndShortNames feeds the event handler names as
// NTFS may report them: in another case than the directory was read
// with, and with 8.3 short components (a program that opened the path by
// its short name). Each must dirty the directory the caller knows.
func TestEventNamesResolveCaseAndShortNames(t *testing.T) {
	root := t.TempDir()
	long := filepath.Join(root, "A Long Directory Name", "Another Long Name")
	if err := os.MkdirAll(long, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(long, "file.txt"), nil, 0o644)
	w, _ := startWalked(t, root, Options{})
	short := shortRel(t, root, filepath.Join(long, "file.txt"))
	if short == "A Long Directory Name/Another Long Name/file.txt" {
		t.Fatalf("no short names on this volume")
	}
	b := w.b.(*rdcw)
	apply := func(action uint32, rel string) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.eventLocked(action, rel)
	}
	apply(windows.FILE_ACTION_MODIFIED, "a long directory name/ANOTHER LONG NAME/file.txt")
	mustChanges(t, w, "event in another case", []string{"A Long Directory Name/Another Long Name"}, nil)
	apply(windows.FILE_ACTION_MODIFIED, short)
	mustChanges(t, w, "event by short name "+short, []string{"A Long Directory Name/Another Long Name"}, nil)
	// Gone by the time the event is handled: the deepest ancestor that
	// still resolves is walked again.
	if err := os.RemoveAll(long); err != nil {
		t.Fatal(err)
	}
	w.Changes()
	apply(windows.FILE_ACTION_REMOVED, short)
	c := w.Changes()
	if !slices.Equal(c.Rescan, []string{"A Long Directory Name"}) {
		t.Fatalf("event by a short name that no longer resolves: %+v, want a Rescan of its deepest existing ancestor", c)
	}
}

// shortRel returns the root-relative 8.3 form of path.
func shortRel(t *testing.T, root, path string) string {
	t.Helper()
	p, _ := windows.UTF16PtrFromString(path)
	buf := make([]uint16, windows.MAX_PATH)
	n, err := windows.GetShortPathName(p, &buf[0], uint32(len(buf)))
	if err != nil {
		t.Fatalf("GetShortPathName: %v", err)
	}
	shortRoot, _ := windows.UTF16PtrFromString(root)
	rbuf := make([]uint16, windows.MAX_PATH)
	rn, err := windows.GetShortPathName(shortRoot, &rbuf[0], uint32(len(rbuf)))
	if err != nil {
		t.Fatalf("GetShortPathName: %v", err)
	}
	rel, err := filepath.Rel(windows.UTF16ToString(rbuf[:rn]), windows.UTF16ToString(buf[:n]))
	if err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(rel)
}
