package engine

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ckpt/ckpt/engine/internal/restore"
	"github.com/ckpt/ckpt/internal/testtree"
)

// richTree has one of everything a workspace holds (symlinks only where
// they can be created).
func richTree(t *testing.T) testtree.Dir {
	bin := make([]byte, 3000)
	for i := range bin {
		bin[i] = byte(i * 7)
	}
	tree := testtree.Dir{
		"README.md":      testtree.File{Content: "# project\n"},
		"empty.txt":      testtree.File{},
		"run.sh":         testtree.File{Content: "#!/bin/sh\necho hi\n", Mode: 0o755},
		"data.bin":       testtree.File{Content: string(bin)},
		"ünïcødé 文件.txt": testtree.File{Content: "unicode\n"},
		"src": testtree.Dir{
			"main.go": testtree.File{Content: "package main\n"},
			"deep":    testtree.Dir{"deeper": testtree.Dir{"leaf.txt": testtree.File{Content: "leaf\n"}}},
		},
		"emptydir": testtree.Dir{},
		"becomes":  testtree.Dir{"inner.txt": testtree.File{Content: "inner\n"}},
		"turns":    testtree.File{Content: "a file that will be a directory\n"},
	}
	if symlinksWork(t) {
		tree["link"] = testtree.Symlink{Target: "README.md"}
		tree["dangling"] = testtree.Symlink{Target: "does/not/exist"}
	}
	return tree
}

// mutateEverything edits, deletes, adds, chmods, turns a file into a
// directory and back, and retargets a symlink.
func mutateEverything(t *testing.T, ws string) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(ws, "README.md"), []byte("# project, edited\n"), 0o644))
	must(os.Remove(filepath.Join(ws, "src/main.go")))
	must(os.WriteFile(filepath.Join(ws, "added.txt"), []byte("new\n"), 0o644))
	must(os.Chmod(filepath.Join(ws, "run.sh"), 0o644))
	must(os.Chmod(filepath.Join(ws, "empty.txt"), 0o600))
	must(os.RemoveAll(filepath.Join(ws, "becomes")))
	must(os.WriteFile(filepath.Join(ws, "becomes"), []byte("now a file\n"), 0o644))
	must(os.Remove(filepath.Join(ws, "turns")))
	must(os.MkdirAll(filepath.Join(ws, "turns/into/dir"), 0o755))
	must(os.WriteFile(filepath.Join(ws, "turns/into/dir/x"), []byte("x\n"), 0o644))
	if symlinksWork(t) {
		must(os.Remove(filepath.Join(ws, "link")))
		must(os.Symlink("src/deep", filepath.Join(ws, "link")))
	}
	must(os.RemoveAll(filepath.Join(ws, "emptydir")))
	must(os.Mkdir(filepath.Join(ws, "newempty"), 0o700))
	must(os.WriteFile(filepath.Join(ws, "data.bin"), []byte("\x00changed binary"), 0o644))
}

func TestRestoreRoundTripEverything(t *testing.T) {
	t.Parallel()
	tree := richTree(t)
	// Larger than the largest chunk (8 MiB): stored as several chunks.
	big := make([]byte, 12<<20)
	rand.NewChaCha8([32]byte{1, 2}).Read(big)
	tree["big.bin"] = testtree.File{Content: string(big)}
	f := newFixture(t, tree)
	original := f.read()
	first := f.save("original")
	mutateEverything(t, f.ws)
	mutated := f.read()
	second := f.save("mutated")
	if second.Stats.Added == 0 || second.Stats.Modified == 0 || second.Stats.Deleted == 0 {
		t.Fatalf("second save stats = %+v, want adds, modifications and deletions", second.Stats)
	}
	res := f.restore(first.ID.String(), RestoreOptions{})
	assertSameTree(t, original, f.read())
	if len(res.Conflicts) != 0 {
		t.Fatalf("conflicts: %v", res.Conflicts)
	}
	if res.Backup != second.ID {
		t.Fatalf("backup = %s, want the unchanged head %s", res.Backup.Short(), second.ID.Short())
	}
	// Redo: the later checkpoint is still there and restorable.
	f.restore(second.ID.String(), RestoreOptions{})
	assertSameTree(t, mutated, f.read())
	f.restore("@1", RestoreOptions{})
	assertSameTree(t, original, f.read())
}

func TestRestoreWritesOnlyDifferences(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"a": testtree.File{Content: "a"}, "b": testtree.File{Content: "b"}, "d": testtree.Dir{"c": testtree.File{Content: "c"}}})
	f.save("one")
	f.write("a", "A")
	f.write("d/new", "n")
	f.save("two")
	res := f.restore("@1", RestoreOptions{})
	if strings.Join(res.Written, ",") != "a" || strings.Join(res.Deleted, ",") != "d/new" {
		t.Fatalf("written %v deleted %v, want [a] and [d/new]", res.Written, res.Deleted)
	}
}

func TestRestoreKeepsUnsavedWorkInBackup(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"notes.txt": testtree.File{Content: "v1\n"}})
	f.save("v1")
	f.write("notes.txt", "unsaved v2\n")
	f.write("fresh.txt", "unsaved new file\n")
	res := f.restore("@1", RestoreOptions{})
	if got := f.readFile("notes.txt"); got != "v1\n" {
		t.Fatalf("after restore notes.txt = %q", got)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "fresh.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("fresh.txt should be gone after restoring @1: %v", err)
	}
	if res.Backup.IsZero() {
		t.Fatal("no backup taken")
	}
	f.restore(res.Backup.String(), RestoreOptions{})
	if got := f.readFile("notes.txt"); got != "unsaved v2\n" {
		t.Fatalf("after undo notes.txt = %q", got)
	}
	if got := f.readFile("fresh.txt"); got != "unsaved new file\n" {
		t.Fatalf("after undo fresh.txt = %q", got)
	}
	log, err := f.e.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, c := range log.Checkpoints {
		kinds = append(kinds, string(c.Kind))
	}
	if strings.Join(kinds, ",") != "save,backup" {
		t.Fatalf("kinds = %v, want save,backup", kinds)
	}
}

func TestIgnoredFilesSurviveRestore(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{
		".gitignore": testtree.File{Content: "*.log\nbuild/\n"},
		"main.c":     testtree.File{Content: "int main;\n"},
		"debug.log":  testtree.File{Content: "log v1\n"},
		"build":      testtree.Dir{"out.o": testtree.File{Content: "obj"}},
	})
	f.save("one")
	f.write("main.c", "int main(void);\n")
	f.write("debug.log", "log v2\n")
	f.save("two")
	f.write("debug.log", "log v3\n")
	f.restore("@1", RestoreOptions{})
	f.restore("@2", RestoreOptions{})
	f.restore("@1", RestoreOptions{NoBackup: true})
	if got := f.readFile("debug.log"); got != "log v3\n" {
		t.Fatalf("ignored debug.log = %q, want it untouched", got)
	}
	if got := f.readFile("build/out.o"); got != "obj" {
		t.Fatalf("ignored build/out.o = %q", got)
	}
}

func TestRestoreReportsUncapturedFileInTheWay(t *testing.T) {
	t.Parallel()
	// At the top level, and in a directory that exists (a restore looks up
	// nothing only in directories it creates).
	for _, conf := range []string{"conf.local", "sub/conf.local"} {
		t.Run(conf, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, testtree.Dir{"keep.txt": testtree.File{Content: "k"}, "sub": testtree.Dir{"keep.txt": testtree.File{Content: "k"}}})
			f.write(conf, "captured\n")
			f.save("with " + conf)
			os.Remove(filepath.Join(f.ws, conf))
			f.save("without")
			// conf is now ignored and recreated by the user: it is not captured.
			f.write(".gitignore", "conf.local\n")
			f.write(conf, "precious local edits\n")
			res := f.restore("@1", RestoreOptions{})
			if len(res.Conflicts) != 1 || res.Conflicts[0].Path != conf || res.Conflicts[0].Kind != ConflictUncaptured {
				t.Fatalf("conflicts = %v, want %s uncaptured", res.Conflicts, conf)
			}
			if got := f.readFile(conf); got != "precious local edits\n" {
				t.Fatalf("%s overwritten: %q", conf, got)
			}
			res = f.restore("@1", RestoreOptions{Force: true})
			if len(res.Conflicts) != 0 || f.readFile(conf) != "captured\n" {
				t.Fatalf("force: conflicts %v, content %q", res.Conflicts, f.readFile(conf))
			}
		})
	}
}

func TestRestoreDryRunChangesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"a": testtree.File{Content: "1"}})
	f.save("one")
	f.write("a", "2")
	f.write("b", "new")
	before := f.read()
	log0, _ := f.e.List(context.Background(), "")
	res := f.restore("@1", RestoreOptions{DryRun: true})
	assertSameTree(t, before, f.read())
	if strings.Join(res.Written, ",") != "a" || strings.Join(res.Deleted, ",") != "b" {
		t.Fatalf("plan written %v deleted %v", res.Written, res.Deleted)
	}
	log1, _ := f.e.List(context.Background(), "")
	if len(log1.Checkpoints) != len(log0.Checkpoints) || log1.Head != log0.Head {
		t.Fatal("dry run changed the task")
	}
}

func TestRestoreOnlyPaths(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"a": testtree.File{Content: "a1"}, "d": testtree.Dir{"x": testtree.File{Content: "x1"}, "y": testtree.File{Content: "y1"}}})
	f.save("one")
	f.write("a", "a2")
	f.write("d/x", "x2")
	f.write("d/y", "y2")
	f.write("d/z", "z2")
	two := f.save("two")
	f.restore("@1", RestoreOptions{Paths: []string{"d/x", "d/z"}})
	for p, want := range map[string]string{"a": "a2", "d/x": "x1", "d/y": "y2"} {
		if got := f.readFile(p); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(f.ws, "d/z")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("d/z should be removed: %v", err)
	}
	log, _ := f.e.List(context.Background(), "")
	if log.Head != two.ID {
		t.Errorf("a partial restore moved the head")
	}
	if _, err := f.e.Restore(context.Background(), "@1", RestoreOptions{Paths: []string{"../etc"}}); !errors.Is(err, ErrBadRequest) {
		t.Errorf("escaping path: err = %v, want ErrBadRequest", err)
	}
}

func TestRestoreStateFlavours(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"f": testtree.File{Content: "files v1"}})
	one, err := f.e.Save(context.Background(), SaveOptions{Message: "one", State: strings.NewReader(`{"messages":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	f.write("f", "files v2")
	if _, err := f.e.Save(context.Background(), SaveOptions{Message: "two", State: strings.NewReader(`{"messages":2}`)}); err != nil {
		t.Fatal(err)
	}
	res := f.restore(one.ID.String(), RestoreOptions{Only: OnlyState})
	if got := f.readFile("f"); got != "files v2" {
		t.Fatalf("--only state touched files: %q", got)
	}
	state, err := f.e.ReadState(context.Background(), res.State)
	if err != nil || string(state) != `{"messages":1}` {
		t.Fatalf("state = %q, %v", state, err)
	}
	f.restore("@2", RestoreOptions{Only: OnlyState})
	res = f.restore(one.ID.String(), RestoreOptions{Only: OnlyBoth})
	if got := f.readFile("f"); got != "files v1" {
		t.Fatalf("--only both left files at %q", got)
	}
	if state, _ := f.e.ReadState(context.Background(), res.State); !bytes.Equal(state, []byte(`{"messages":1}`)) {
		t.Fatalf("--only both state = %q", state)
	}
}

// The public conflict kinds are the restore package's, value for value.
func TestConflictKindsMatchTheRestorePackage(t *testing.T) {
	t.Parallel()
	for public, internal := range map[ConflictKind]restore.ConflictKind{
		ConflictUncaptured: restore.ConflictUncaptured, ConflictUnsaved: restore.ConflictUnsaved,
		ConflictDirHolds: restore.ConflictDirHolds, ConflictBlockedBelow: restore.ConflictBlockedBelow,
		ConflictFault: restore.ConflictFault, ConflictChanged: restore.ConflictChanged,
	} {
		if string(public) != string(internal) {
			t.Errorf("ConflictKind %q, restore's %q", public, internal)
		}
	}
}

// lstatCounter counts the lookups a restore makes below the top level.
type lstatCounter struct {
	restore.FS
	nested *atomic.Int64
}

func (c lstatCounter) Lstat(name string) (os.FileInfo, error) {
	if strings.Contains(name, "/") {
		c.nested.Add(1)
	}
	return c.FS.Lstat(name)
}

// A restore into an emptied workspace recreates everything without looking
// up a single path inside the directories it creates: they were empty, so
// nothing uncaptured can stand in the way (a clone writes 100k files
// without 100k lookups). An uncaptured file in a directory that exists is
// still found and left alone.
func TestRestoreLooksNothingUpInDirectoriesItCreates(t *testing.T) {
	t.Parallel()
	f := newFixture(t, richTree(t))
	want := f.read()
	f.save("all")
	entries, err := os.ReadDir(f.ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(f.ws, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	var nested atomic.Int64
	f.open(Options{hooks: testHooks{wrapRestoreFS: func(fsys restore.FS) restore.FS { return lstatCounter{fsys, &nested} }}})
	if res := f.restore("@1", RestoreOptions{NoBackup: true}); len(res.Conflicts) != 0 {
		t.Fatalf("conflicts %v", res.Conflicts)
	}
	assertSameTree(t, want, f.read())
	if n := nested.Load(); n != 0 {
		t.Fatalf("%d lookups inside directories the restore created", n)
	}
}

// A restore of a workspace that a checkpoint of the task holds already
// (the files left behind by a pull that moved the head, or reverted by
// hand) takes that checkpoint as its backup instead of adding one to the
// task's sequence, which a remote shares: a reader that pulled and
// restored would otherwise fork the task from its writer's next push.
func TestABackupOfWhatACheckpointHoldsIsThatCheckpoint(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"a": testtree.File{Content: "1"}})
	one := f.save("one")
	f.write("a", "2")
	two := f.save("two")
	f.write("a", "1") // the files of @1 again, the head at @2
	res := f.restore("@2", RestoreOptions{})
	if res.Backup != one.ID {
		t.Fatalf("backup %s, want @1 (%s), which holds the workspace", res.Backup.Short(), one.ID.Short())
	}
	log, err := f.e.List(context.Background(), "")
	if err != nil || len(log.Checkpoints) != 2 || log.Head != two.ID {
		t.Fatalf("after the restore: %d checkpoints, head %s (%v); want @1 and @2 alone, head @2", len(log.Checkpoints), log.Head.Short(), err)
	}
	if got := f.readFile("a"); got != "2" {
		t.Fatalf("a = %q after the restore, want 2", got)
	}
	// Work that no checkpoint holds still gets a backup of its own.
	f.write("a", "3")
	three := f.restore("@1", RestoreOptions{}).Backup
	if three == one.ID || three == two.ID || three.IsZero() {
		t.Fatalf("backup of unsaved work: %s, want a new checkpoint", three.Short())
	}
	// A checkpoint the retention policy would drop before a backup made
	// now is not one: with keep-last 1, @2 (behind the backup of 3) is not
	// kept, and the files of @2 again get a backup of their own.
	if err := f.e.SetRetention(context.Background(), RetentionPolicy{KeepLast: 1}); err != nil {
		t.Fatal(err)
	}
	f.write("a", "2")
	if res := f.restore("@1", RestoreOptions{}); res.Backup == two.ID || res.Backup == three || res.Backup.IsZero() {
		t.Fatalf("backup under keep-last 1: %s, want a new checkpoint (not @2, which retention drops first)", res.Backup.Short())
	}
}
