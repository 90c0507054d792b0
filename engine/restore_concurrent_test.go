package engine

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ckpt/ckpt/engine/internal/restore"
	"github.com/ckpt/ckpt/internal/testtree"
)

// editingFS is a restore seam that runs edit once, as the restore creates
// its first temporary file in the workspace: another program's change
// made while the restore writes, after it looked at what stands.
type editingFS struct {
	restore.FS
	cheap bool // SyncAllState's cheap, where syncfs is sound
	once  sync.Once
	edit  func()
}

func (f *editingFS) Create(rel string) (restore.TempFile, error) {
	if strings.HasPrefix(filepath.Base(rel), restore.TempPrefix) {
		f.once.Do(f.edit)
	}
	return f.FS.Create(rel)
}

func (f *editingFS) SyncAllState() (sound, cheap bool) {
	sound, _ = f.FS.SyncAllState()
	return sound, sound && f.cheap
}

// A file an editor saves while a restore writes is left alone with its new
// content, a conflict, whether the restore syncs each file or stages them
// all: it is in no checkpoint, and the restore's content never replaces
// it. The other files are restored, and no temporary file stays.
func TestAFileSavedWhileARestoreWritesKeepsItsContent(t *testing.T) {
	t.Parallel()
	for _, staged := range []bool{false, true} {
		f := newFixture(t, testtree.Dir{
			"a.txt": testtree.File{Content: "a one\n"},
			"b.txt": testtree.File{Content: "b one\n"},
			"c.txt": testtree.File{Content: "c one\n"},
		})
		one := f.read()
		f.save("one")
		for _, name := range []string{"a.txt", "b.txt", "c.txt"} {
			f.write(name, strings.Replace(one[name].Content, "one", "two", 1))
		}
		f.save("two")
		edited := filepath.Join(f.ws, "b.txt")
		f.open(Options{hooks: testHooks{wrapRestoreFS: func(inner restore.FS) restore.FS {
			return &editingFS{FS: inner, cheap: staged, edit: func() {
				if err := os.WriteFile(edited, []byte("the editor's\n"), 0o644); err != nil {
					t.Error(err)
				}
			}}
		}}})
		res, err := restoreBounded(t, f.e, "@1")
		if err != nil {
			t.Fatalf("staged %v: restore: %v", staged, err)
		}
		if len(res.Conflicts) != 1 || res.Conflicts[0].Path != "b.txt" || res.Conflicts[0].Kind != ConflictChanged {
			t.Fatalf("staged %v: conflicts %+v; want b.txt changed", staged, res.Conflicts)
		}
		want := one
		want["b.txt"] = testtree.Entry{Kind: "file", Content: "the editor's\n", Mode: one["b.txt"].Mode}
		assertSameTree(t, want, f.read())
		if f.e.PendingRestore() != nil {
			t.Fatalf("staged %v: the restore is still pending", staged)
		}
	}
}

// fullDiskFS is a restore seam on a disk that is full until the restore
// lets go of a file it removed (held open, its space not yet free).
type fullDiskFS struct {
	restore.FS
	freed atomic.Bool
	held  atomic.Int32
}

func (f *fullDiskFS) Hold(name string) io.Closer {
	f.held.Add(1)
	inner := f.FS.Hold(name)
	return closeFunc(func() error {
		f.freed.Store(true)
		if inner != nil {
			return inner.Close()
		}
		return nil
	})
}

func (f *fullDiskFS) Create(rel string) (restore.TempFile, error) {
	t, err := f.FS.Create(rel)
	if err != nil {
		return nil, err
	}
	return &fullDiskFile{TempFile: t, fs: f}, nil
}

type fullDiskFile struct {
	restore.TempFile
	fs *fullDiskFS
}

func (f *fullDiskFile) Write(b []byte) (int, error) {
	if !f.fs.freed.Load() {
		return 0, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	return f.TempFile.Write(b)
}

type closeFunc func() error

func (c closeFunc) Close() error { return c() }

// A restore that fits on the disk once the files it removes are gone
// succeeds where the disk is full until then: the files it removed, which
// it holds open until it ends, are let go at the first write the full
// disk refuses, and that write is tried again.
func TestARestoreThatFitsOnceItsRemovalsAreGoneSucceeds(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"a.txt": testtree.File{Content: "a\n"}})
	one := f.read()
	f.save("one")
	if err := os.Remove(filepath.Join(f.ws, "a.txt")); err != nil {
		t.Fatal(err)
	}
	f.write("big.bin", strings.Repeat("x", 1<<16))
	f.save("two")
	full := &fullDiskFS{}
	f.open(Options{hooks: testHooks{wrapRestoreFS: func(inner restore.FS) restore.FS {
		full.FS = inner
		return full
	}}})
	res, err := restoreBounded(t, f.e, "@1")
	if err != nil || len(res.Conflicts) != 0 {
		t.Fatalf("restore on a disk full until big.bin's space is free: %v, conflicts %v", err, res)
	}
	if full.held.Load() == 0 || !full.freed.Load() {
		t.Fatalf("held %d, freed %v: the restore did not hold big.bin, or never let go", full.held.Load(), full.freed.Load())
	}
	assertSameTree(t, one, f.read())
}

// Two names of one file (hard links), one rewritten and the other only
// given another mode by the restore: the chmod changes the file both
// names share, which is no change another program made, and no conflict.
func TestARestoreChmodOfOneHardLinkIsNoChangeOfTheOther(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{
		"p": testtree.File{Content: "y\n"},
		"q": testtree.File{Content: "x\n", Mode: 0o755},
	})
	want := f.read()
	f.save("one")
	p, q := filepath.Join(f.ws, "p"), filepath.Join(f.ws, "q")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(q, p); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(q, 0o644); err != nil {
		t.Fatal(err)
	}
	f.save("linked")
	// Staged: every write, the chmod among them, ends before the renames.
	f.open(Options{hooks: testHooks{wrapRestoreFS: func(inner restore.FS) restore.FS {
		return &editingFS{FS: inner, cheap: true, edit: func() {}}
	}}})
	if res := f.restore("@1", RestoreOptions{}); len(res.Conflicts) != 0 {
		t.Fatalf("conflicts %+v; want none", res.Conflicts)
	}
	assertSameTree(t, want, f.read())
}

// A file changed after the restore's backup read it, before the restore
// began writing (here: at the journal's write), is left alone as
// changed, whether the restore would replace it or remove it: the backup
// holds the content the scan read, not this one.
func TestAFileChangedAfterTheBackupReadItKeepsItsContent(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{
		"a.txt": testtree.File{Content: "a one\n"},
		"b.txt": testtree.File{Content: "b one\n"},
	})
	// Old modification times, distinct per version: the stat cache's
	// records tell the versions apart.
	age := func(d time.Duration, names ...string) {
		for _, n := range names {
			when := time.Now().Add(-d)
			if err := os.Chtimes(filepath.Join(f.ws, n), when, when); err != nil {
				t.Fatal(err)
			}
		}
	}
	age(3*time.Hour, "a.txt", "b.txt")
	f.save("one")
	f.write("a.txt", "a two\n")
	f.write("b.txt", "b two\n")
	f.write("d.txt", "only in two\n")
	age(2*time.Hour, "a.txt", "b.txt", "d.txt")
	f.save("two")
	edited := map[string]string{"b.txt": "the editor's b\n", "d.txt": "the editor's d\n"}
	f.open(Options{hooks: testHooks{pause: func(_ context.Context, point string) {
		if point != pauseRestoreJournaled {
			return
		}
		for name, content := range edited {
			if err := os.WriteFile(filepath.Join(f.ws, name), []byte(content), 0o644); err != nil {
				t.Error(err)
			}
		}
	}}})
	res := f.restore("@1", RestoreOptions{})
	var changed []string
	for _, c := range res.Conflicts {
		if c.Kind == ConflictChanged {
			changed = append(changed, c.Path)
		}
	}
	slices.Sort(changed)
	if !slices.Equal(changed, []string{"b.txt", "d.txt"}) || len(res.Conflicts) != 2 {
		t.Fatalf("conflicts %+v; want b.txt and d.txt changed", res.Conflicts)
	}
	for name, content := range edited {
		if got := f.readFile(name); got != content {
			t.Errorf("%s = %q, want the editor's %q", name, got, content)
		}
	}
	if got := f.readFile("a.txt"); got != "a one\n" {
		t.Errorf("a.txt = %q, want it restored", got)
	}
}

// A file rewritten between the listing of the restore's backup scan and
// its read (an editor saving through a new file as the scan reaches it)
// is held by the backup as the scan read it, recorded with the stat the
// read's open took: the restore replaces it as any file its backup holds
// (the record paired the listing's stat with that content, and the
// restore found the file changed since and left it alone). A save the
// editor makes after the read is still found, though that record is
// racy (its mtime fresh), and kept.
func TestAFileRewrittenBetweenTheBackupsListingAndItsReadIsRestored(t *testing.T) {
	t.Parallel()
	for _, savedAgain := range []bool{false, true} {
		t.Run(fmt.Sprintf("saved again after the read: %v", savedAgain), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, testtree.Dir{
				"a.txt": testtree.File{Content: "a one\n"},
				"b.txt": testtree.File{Content: "b one\n"},
			})
			f.save("one")
			f.write("b.txt", "b two\n")
			const rewritten, again = "b as the editor saved it\n", "b as the editor saved it again, later\n"
			var once sync.Once
			f.open(Options{hooks: testHooks{
				beforeRead: func(rel string) {
					if rel != "b.txt" {
						return
					}
					once.Do(func() {
						tmp := filepath.Join(f.ws, "b.txt.swp")
						if err := os.WriteFile(tmp, []byte(rewritten), 0o644); err != nil {
							t.Error(err)
						}
						if err := os.Rename(tmp, filepath.Join(f.ws, "b.txt")); err != nil {
							t.Error(err)
						}
					})
				},
				pause: func(_ context.Context, point string) {
					if point == pauseRestoreJournaled && savedAgain {
						if err := os.WriteFile(filepath.Join(f.ws, "b.txt"), []byte(again), 0o644); err != nil {
							t.Error(err)
						}
					}
				},
			}})
			res := f.restore("@1", RestoreOptions{})
			if got := catString(t, f.e, res.Backup.String(), "b.txt"); got != rewritten {
				t.Errorf("the backup holds b.txt as %q, want what the scan read, %q", got, rewritten)
			}
			if !savedAgain {
				if len(res.Conflicts) != 0 {
					t.Fatalf("conflicts %+v; want none: the backup holds b.txt as the scan read it", res.Conflicts)
				}
				if got := f.readFile("b.txt"); got != "b one\n" {
					t.Errorf("b.txt = %q, want it restored", got)
				}
				return
			}
			if len(res.Conflicts) != 1 || res.Conflicts[0].Path != "b.txt" || res.Conflicts[0].Kind != ConflictChanged {
				t.Fatalf("conflicts %+v; want b.txt changed", res.Conflicts)
			}
			if got := f.readFile("b.txt"); got != again {
				t.Errorf("b.txt = %q, want the editor's later save kept, %q", got, again)
			}
		})
	}
}
