package engine

import (
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/ckpt/ckpt/engine/internal/restore"
	"github.com/ckpt/ckpt/internal/faultfs"
	"github.com/ckpt/ckpt/internal/testtree"
)

// conflictPaths lists the paths of res's conflicts.
func conflictPaths(res *RestoreResult) []string {
	var ps []string
	for _, c := range res.Conflicts {
		ps = append(ps, c.Path)
	}
	return ps
}

func TestRestoreWithoutBackupKeepsUnsavedWork(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"top": testtree.File{Content: "top\n"}, "same": testtree.File{Content: "s\n"}})
	f.save("one")
	one := f.read()
	f.write("later", "saved in @2\n")
	f.write("same", "s2\n")
	f.save("two")
	f.write("top", "top\nEDIT\n")
	f.write("brandnew", "new\n")
	// Read-only: a mode change Windows can make too (its read-only attribute).
	if err := os.Chmod(filepath.Join(f.ws, "later"), 0o444); err != nil {
		t.Fatal(err)
	}

	dry := f.restore("@1", RestoreOptions{NoBackup: true, DryRun: true})
	res := f.restore("@1", RestoreOptions{NoBackup: true})
	// top: an unsaved edit; brandnew: never saved; later: saved, but its
	// mode changed since. same: saved as it is, so restored.
	want := []string{"brandnew", "later", "top"}
	if !slices.Equal(conflictPaths(res), want) || !slices.Equal(conflictPaths(dry), want) {
		t.Fatalf("conflicts = %v (dry run %v), want %v", conflictPaths(res), conflictPaths(dry), want)
	}
	for rel, content := range map[string]string{"top": "top\nEDIT\n", "brandnew": "new\n", "later": "saved in @2\n", "same": "s\n"} {
		if got := f.readFile(rel); got != content {
			t.Errorf("%s = %q, want %q", rel, got, content)
		}
	}
	for _, c := range res.Conflicts {
		if !strings.Contains(c.Reason, "not captured") {
			t.Errorf("conflict %s: reason %q", c.Path, c.Reason)
		}
	}
	if !res.Backup.IsZero() {
		t.Fatal("a restore without backup took one")
	}

	// Force discards them, as asked.
	res = f.restore("@1", RestoreOptions{NoBackup: true, Force: true})
	if len(res.Conflicts) != 0 {
		t.Fatalf("force: conflicts %v", res.Conflicts)
	}
	assertSameTree(t, one, f.read())
}

func TestRestoreWithConflictsMovesTheHead(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"keep": testtree.File{Content: "k"}, "conf.local": testtree.File{Content: "captured\n"}})
	one := f.save("one")
	os.Remove(filepath.Join(f.ws, "conf.local"))
	f.save("two")
	f.write(".gitignore", "conf.local\n")
	f.write("conf.local", "local\n")
	res := f.restore("@1", RestoreOptions{})
	if !slices.Equal(conflictPaths(res), []string{"conf.local"}) {
		t.Fatalf("conflicts = %v", res.Conflicts)
	}
	log, err := f.e.List(context.Background(), "")
	if err != nil || log.Head != one.ID {
		t.Fatalf("head = %v (%v), want @1 even with conflicts", log.Head, err)
	}
}

func TestRestorePermissionFaultsBecomeConflictsAndTheRestFinishes(t *testing.T) {
	t.Parallel()
	// A name too long for the file system concerns its path only too: a
	// restore must not fail (and leave its journal to fail again at every
	// write) for it.
	for _, errno := range []syscall.Errno{syscall.EACCES, syscall.ENAMETOOLONG} {
		t.Run(errno.Error(), func(t *testing.T) {
			t.Parallel()
			pathFaultsBecomeConflicts(t, errno)
		})
	}
}

func pathFaultsBecomeConflicts(t *testing.T, errno syscall.Errno) {
	f := newFixture(t, testtree.Dir{
		"locked": testtree.Dir{"a": testtree.File{Content: "a1"}, "b": testtree.File{Content: "b1"}},
		"open":   testtree.Dir{"c": testtree.File{Content: "c1"}},
		"gone":   testtree.File{Content: "g"},
	})
	f.save("one")
	want := f.read()
	f.write("locked/a", "a2")
	f.write("locked/b", "b2")
	f.write("open/c", "c2")
	f.write("locked/new", "n")
	os.Remove(filepath.Join(f.ws, "gone"))
	f.save("two")
	// Every change inside locked/ is refused, as in a directory the user
	// may not write.
	plan := newFaultPlan(-1, errno, func(_ int, op faultfs.Op) bool {
		return strings.HasPrefix(op.Path, "locked/") && op.Kind != faultfs.OpFileSync
	})
	f.open(plan.options(f.store))
	res := f.restore("@1", RestoreOptions{})
	if got := conflictPaths(res); !slices.Equal(got, []string{"locked/a", "locked/b", "locked/new"}) {
		t.Fatalf("conflicts = %v, want every path under locked/", got)
	}
	for _, c := range res.Conflicts {
		if !strings.Contains(c.Reason, errno.Error()) {
			t.Errorf("conflict %s: reason %q does not say why", c.Path, c.Reason)
		}
	}
	if f.readFile("open/c") != "c1" || f.readFile("gone") != "g" || f.readFile("locked/a") != "a2" {
		t.Fatalf("the rest was not restored, or a locked path changed: open/c %q gone %q locked/a %q",
			f.readFile("open/c"), f.readFile("gone"), f.readFile("locked/a"))
	}
	if f.e.PendingRestore() != nil {
		t.Fatal("a restore that finished with conflicts left its journal")
	}
	f.open(Options{})
	f.restore("@1", RestoreOptions{})
	assertSameTree(t, want, f.read())
}

// ownerPermsFS is a restore seam that refuses, as the kernel refuses
// anyone but root, to create, rename or remove an entry in a directory
// whose owner may not write it: the tests run as root too.
type ownerPermsFS struct{ restore.FS }

func (f ownerPermsFS) check(names ...string) error {
	for _, n := range names {
		dir := path.Dir(n)
		if fi, err := f.FS.Lstat(dir); err == nil && fi.Mode().Perm()&0o200 == 0 {
			return &fs.PathError{Op: "write", Path: n, Err: syscall.EACCES}
		}
	}
	return nil
}

func (f ownerPermsFS) Create(rel string) (restore.TempFile, error) {
	if err := f.check(rel); err != nil {
		return nil, err
	}
	return f.FS.Create(rel)
}

func (f ownerPermsFS) Rename(oldname, newname string) error {
	if err := f.check(oldname, newname); err != nil {
		return err
	}
	return f.FS.Rename(oldname, newname)
}

func (f ownerPermsFS) Remove(name string) error {
	if err := f.check(name); err != nil {
		return err
	}
	return f.FS.Remove(name)
}

func (f ownerPermsFS) Mkdir(name string, perm fs.FileMode) error {
	if err := f.check(name); err != nil {
		return err
	}
	return f.FS.Mkdir(name, perm)
}

// A directory made unwritable since the checkpoint that holds it writable
// is given its mode back before the restore writes in it, so the restore
// finishes; one the checkpoint itself holds unwritable keeps its mode,
// and what the restore would write in it is a conflict, the rest restored.
func TestRestoreIntoUnwritableDirectory(t *testing.T) {
	t.Parallel()
	needDirPermissions(t)
	f := newFixture(t, testtree.Dir{"ro": testtree.Dir{"a": testtree.File{Content: "a1"}}, "b": testtree.File{Content: "b1"}})
	want := f.read()
	f.save("one")
	f.write("ro/a", "a2")
	f.write("b", "b2")
	f.save("two")
	ro := filepath.Join(f.ws, "ro")
	if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(ro, 0o755) })
	f.open(Options{hooks: testHooks{wrapRestoreFS: func(inner restore.FS) restore.FS { return ownerPermsFS{inner} }}})
	if res := f.restore("@1", RestoreOptions{}); len(res.Conflicts) != 0 {
		t.Fatalf("restore into a directory made unwritable since: conflicts %v", res.Conflicts)
	}
	assertSameTree(t, want, f.read())

	// Saved unwritable (as root may write in it): restoring ro/a there is
	// refused, and ro keeps the mode its checkpoints hold.
	f.write("b", "b3")
	if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	three := f.save("three")
	if err := os.Chmod(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	f.write("ro/a", "a4")
	if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	f.save("four")
	res := f.restore(three.ID.String(), RestoreOptions{})
	if !slices.Equal(conflictPaths(res), []string{"ro/a"}) || f.readFile("b") != "b3" || f.readFile("ro/a") != "a4" {
		t.Fatalf("conflicts %v, b %q, ro/a %q", res.Conflicts, f.readFile("b"), f.readFile("ro/a"))
	}
	if fi, err := os.Stat(ro); err != nil || fi.Mode().Perm() != 0o555 {
		t.Fatalf("ro after the restore: %v, %v; want 0555", fi, err)
	}
}

// restoreSyncs restores a change of three files and a new directory and
// returns how many files the restore synced one by one, the directories it
// synced ("store" for the journal's), and its syncfs calls and renames in
// the order it made them ("syncfs", "rename PATH"). again: the store
// restored there and back before, so the journal's file exists.
func restoreSyncs(t *testing.T, syncAllCheap, again bool) (fsyncs int, dirs, order []string) {
	f := threeFilesChanged(t)
	if again {
		f.leaveJournalFile()
	}
	var ops []faultfs.Op
	plan := newFaultPlan(-1, 0, func(_ int, op faultfs.Op) bool {
		ops = append(ops, op)
		return false
	})
	plan.syncAllCheap = syncAllCheap
	f.open(plan.options(f.store))
	f.restore("@1", RestoreOptions{})
	for _, o := range ops {
		switch {
		case o.Kind == faultfs.OpSyncFS:
			order = append(order, "syncfs")
		case o.Kind == faultfs.OpRename && !filepath.IsAbs(o.Path):
			order = append(order, o.String())
		case o.Kind != faultfs.OpFileSync:
		case o.Path == "." || o.Path == "d":
			dirs = append(dirs, o.Path)
		case filepath.Base(o.Path) == filepath.Base(f.store):
			dirs = append(dirs, "store")
		default:
			fsyncs++
		}
	}
	slices.Sort(dirs)
	return fsyncs, dirs, order
}

// threeFilesChanged saves d/x, d/y and top as @1, then d/e/z added and the
// three changed as @2: a restore of @1 replaces three files and removes one.
func threeFilesChanged(t *testing.T) *fixture {
	f := newFixture(t, testtree.Dir{"d": testtree.Dir{"x": testtree.File{Content: "1"}, "y": testtree.File{Content: "1"}}, "top": testtree.File{Content: "1"}})
	f.save("one")
	f.write("d/x", "2")
	f.write("d/y", "2")
	f.write("d/e/z", "2")
	f.write("top", "2")
	f.save("two")
	return f
}

// threeRenames are the renames of the restore's three files into place.
var threeRenames = []string{"rename d/x", "rename d/y", "rename top"}

func TestRestoreSyncsEachChangedDirectoryOnce(t *testing.T) {
	t.Parallel()
	// Three files written, each synced before its rename, and the journal
	// synced twice (written, then cleared); the directories holding changes
	// (d lost e, the root, and the store's where the store's first restore
	// creates the journal's file, not again) synced once each.
	for _, again := range []bool{false, true} {
		fsyncs, dirs, order := restoreSyncs(t, false, again)
		slices.Sort(order)
		wantDirs := []string{".", "d", "store"}
		if again {
			wantDirs = wantDirs[:2]
		}
		if fsyncs != 5 || !slices.Equal(dirs, wantDirs) || !slices.Equal(order, threeRenames) {
			t.Fatalf("again %v: %d files synced, directories %v, renames and syncfs %v", again, fsyncs, dirs, order)
		}
	}
}

func TestRestoreSyncsTheFileSystemWhenThatIsCheap(t *testing.T) {
	t.Parallel()
	fsyncs, dirs, order := restoreSyncs(t, true, false)
	if !syncfsSound(t, t.TempDir()) {
		// No sound syncfs here: each file and directory, as when it is dear.
		slices.Sort(order)
		if fsyncs != 5 || !slices.Equal(dirs, []string{".", "d", "store"}) || !slices.Equal(order, threeRenames) {
			t.Fatalf("%d files synced, directories %v, renames and syncfs %v", fsyncs, dirs, order)
		}
		return
	}
	// The journal alone is synced as a file (written, then cleared), its
	// directory once (its file created); the workspace's files are made
	// durable by one syncfs before any of them is renamed into place, and
	// the renames by a second one.
	if fsyncs != 2 || !slices.Equal(dirs, []string{"store"}) || len(order) != 5 ||
		order[0] != "syncfs" || order[4] != "syncfs" || !slices.Equal(slices.Sorted(slices.Values(order[1:4])), threeRenames) {
		t.Fatalf("%d files synced, directories %v, renames and syncfs %v", fsyncs, dirs, order)
	}
}

func TestRestoreWithoutBackupAcceptsWhatAnotherTaskHolds(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"f": testtree.File{Content: "main v1\n"}})
	f.save("main one")
	f.write("f", "experiment\n")
	if _, err := f.e.Save(context.Background(), SaveOptions{Task: "exp", Message: "exp one"}); err != nil {
		t.Fatal(err)
	}
	// The workspace holds what task exp's head captures, not the default
	// task's: nothing is unsaved, so the restore replaces it.
	res := f.restore("@1", RestoreOptions{NoBackup: true})
	if len(res.Conflicts) != 0 || f.readFile("f") != "main v1\n" {
		t.Fatalf("conflicts %v, f = %q", res.Conflicts, f.readFile("f"))
	}
}

// A restore that syncs each file makes a mode-only change durable as
// well: the file whose mode it changed (and a directory whose mode it
// changed, where directories keep modes, though its entries are the
// same) is synced after the change and
// before the journal, which keeps the restore pending, is cleared.
func TestRestoreSyncsAModeOnlyChangeBeforeItEnds(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"d": testtree.Dir{"m": testtree.File{Content: "m", Mode: 0o644}}, "e": testtree.Dir{"k": testtree.File{Content: "k"}}})
	f.save("one")
	// Read-only: a mode change Windows can make too.
	changed := []string{"d/m"}
	if err := os.Chmod(filepath.Join(f.ws, "d", "m"), 0o444); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		changed = append(changed, "e")
		if err := os.Chmod(filepath.Join(f.ws, "e"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	f.save("two")
	var ops []faultfs.Op
	rec := newFaultPlan(-1, 0, func(_ int, op faultfs.Op) bool {
		ops = append(ops, op)
		return false
	})
	f.open(rec.options(f.store))
	if res := f.restore("@1", RestoreOptions{}); !slices.Equal(res.Written, []string{"d/m"}) {
		t.Fatalf("written %v, want d/m", res.Written)
	}
	// The journal's last write is its clearing.
	end := -1
	for i, op := range ops {
		if op.Kind == faultfs.OpFileWrite && filepath.Base(op.Path) == journalName {
			end = i
		}
	}
	if end < 0 {
		t.Fatalf("no write of the journal among %v", ops)
	}
	for _, rel := range changed {
		chmod := slices.Index(ops, faultfs.Op{Kind: faultfs.OpChmod, Path: rel})
		synced := slices.Index(ops[max(chmod, 0):end], faultfs.Op{Kind: faultfs.OpFileSync, Path: rel})
		if chmod < 0 || synced < 0 {
			t.Errorf("%s: its mode change is not synced before the journal is cleared: %v", rel, ops)
		}
	}
}
