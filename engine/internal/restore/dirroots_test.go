package restore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func openTestRoot(t *testing.T) (string, rootFS) {
	t.Helper()
	dir := t.TempDir()
	fsys, closeFS, err := OpenRoot(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeFS() })
	return dir, fsys.(rootFS)
}

func mkdirs(t *testing.T, fsys FS, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := fsys.Mkdir(n, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// writeTemp creates a temporary file beside rel and renames it to rel.
func writeTemp(t *testing.T, fsys FS, rel, content string) {
	t.Helper()
	f, err := fsys.Create(tempName(rel, tempStem))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte(content)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := fsys.Rename(f.Name(), rel); err != nil {
		t.Fatal(err)
	}
}

// A directory removed and made again is written through its new self, not
// through the handle of the removed one.
func TestRemovedAndRemadeDirectoryIsReopened(t *testing.T) {
	dir, fsys := openTestRoot(t)
	mkdirs(t, fsys, "a", "a/b")
	writeTemp(t, fsys, "a/b/x", "old")
	for _, remove := range []func(string) error{fsys.RemoveAll, func(n string) error {
		if err := fsys.Remove(n + "/b/x"); err != nil {
			return err
		}
		if err := fsys.Remove(n + "/b"); err != nil {
			return err
		}
		return fsys.Remove(n)
	}} {
		if err := remove("a"); err != nil {
			t.Fatal(err)
		}
		mkdirs(t, fsys, "a", "a/b")
		writeTemp(t, fsys, "a/b/x", "new")
		if b, err := os.ReadFile(filepath.Join(dir, "a", "b", "x")); err != nil || string(b) != "new" {
			t.Fatalf("a/b/x after the directory was made again = %q, %v", b, err)
		}
	}
}

// A directory renamed away is not written through under its old name.
func TestRenamedDirectoryIsForgotten(t *testing.T) {
	dir, fsys := openTestRoot(t)
	mkdirs(t, fsys, "d")
	writeTemp(t, fsys, "d/x", "one")
	if err := fsys.Rename("d", "e"); err != nil {
		t.Fatal(err)
	}
	mkdirs(t, fsys, "d")
	writeTemp(t, fsys, "d/x", "two")
	for name, want := range map[string]string{"d/x": "two", "e/x": "one"} {
		if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name))); err != nil || string(b) != want {
			t.Fatalf("%s = %q, %v; want %q", name, b, err, want)
		}
	}
}

// Errors name the whole path, as a lookup from the workspace root does.
func TestErrorsNameTheWholePath(t *testing.T) {
	_, fsys := openTestRoot(t)
	mkdirs(t, fsys, "a", "a/b")
	_, err := fsys.Lstat("a/b/missing")
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != "a/b/missing" || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Lstat of a missing file = %v; want a not-exist error naming a/b/missing", err)
	}
	err = fsys.Rename("a/b/gone", "a/b/there")
	var le *os.LinkError
	if !errors.As(err, &le) || le.Old != "a/b/gone" || le.New != "a/b/there" {
		t.Fatalf("Rename of a missing file = %v; want a link error naming both paths", err)
	}
}

// Unused directories beyond the bound are closed; one in use when it is
// forgotten stays usable until released, then is closed.
func TestOpenDirectoriesAreBoundedAndClosedAfterUse(t *testing.T) {
	_, fsys := openTestRoot(t)
	d := fsys.dirs
	d.maxOpen = 2
	for i := range 5 {
		name := fmt.Sprintf("d%d", i)
		mkdirs(t, fsys, name)
		writeTemp(t, fsys, name+"/x", "x")
	}
	if len(d.open) > 2 || len(d.idle) > 2 {
		t.Fatalf("%d directories open, %d idle; want at most 2", len(d.open), len(d.idle))
	}
	dr, err := d.acquire("d0")
	if err != nil {
		t.Fatal(err)
	}
	d.forget("d0")
	if _, err := dr.handle.lstat("x"); err != nil || dr.handle == closedHandle {
		t.Fatalf("a forgotten directory in use was closed: %v", err)
	}
	d.release(dr)
	if dr.handle != closedHandle {
		t.Fatal("a forgotten directory stayed open after its last use")
	}
}

// The per-path counts that let forget skip paths nothing is open under
// stay equal to what the open directories imply, through opens, idle
// evictions and forgets of directories and of files.
func TestDirRootsCountsFollowTheOpenDirectories(t *testing.T) {
	_, fsys := openTestRoot(t)
	mkdirs(t, fsys, "a", "a/b", "a/b/c", "a/d", "e")
	d := fsys.dirs
	d.maxOpen = 2
	check := func(step string) {
		t.Helper()
		want := map[string]int{}
		for dir := range d.open {
			for p := dir; ; p = filepath.ToSlash(filepath.Dir(p)) {
				want[p]++
				if !strings.Contains(p, "/") {
					break
				}
			}
		}
		if fmt.Sprint(want) != fmt.Sprint(d.under) {
			t.Fatalf("%s: counts %v, open directories imply %v", step, d.under, want)
		}
	}
	for _, dir := range []string{"a/b/c", "a/d", "a/b", "e", "a"} {
		dr, err := d.acquire(dir)
		if err != nil {
			t.Fatal(err)
		}
		d.release(dr)
		check("open " + dir)
	}
	held, err := d.acquire("a/b/c")
	if err != nil {
		t.Fatal(err)
	}
	writeTemp(t, fsys, "a/b/c/f", "x") // forgets a file: nothing open under it
	check("rename of a file")
	d.forget("a/b")
	check("forget a/b")
	if d.open["a/b/c"] != nil || !held.forgotten {
		t.Fatal("a/b/c, in use, is still open after forgetting a/b")
	}
	d.release(held)
	check("release of the forgotten a/b/c")
}

// noBeneath stands in for openBeneath where the platform has none: every
// directory opens through its parent.
func noBeneath(dirHandle, string) (dirHandle, error) { return dirHandle{}, errNoBeneath }

// No directory is reached through a symlink, which may lead out of the
// workspace, whether it is opened in one call or one name at a time: no
// entry is created, made, removed, changed or looked up through one; a real
// directory is reached either way.
func TestNoDirectoryIsOpenedThroughASymlink(t *testing.T) {
	for _, walk := range []bool{false, true} {
		dir, fsys := openTestRoot(t)
		if walk {
			fsys.dirs.beneath = noBeneath
		} else if runtime.GOOS == "linux" && !hasBeneath(t, dir) {
			t.Log("no openat2 here: both passes walk")
		}
		outside := t.TempDir()
		b := filepath.Join(outside, "b")
		if err := os.Mkdir(b, 0o755); err != nil {
			t.Fatal(err)
		}
		before, err := os.Stat(b)
		if err != nil {
			t.Fatal(err)
		}
		mkdirs(t, fsys, "c", "c/e", "c/e/f")
		for _, link := range []string{"a", "c/d"} {
			if err := os.Symlink(outside, filepath.Join(dir, filepath.FromSlash(link))); err != nil {
				t.Skipf("no symlinks here: %v", err)
			}
		}
		for _, through := range []string{"a", "c/d"} {
			for _, name := range []string{through + "/x", through + "/b/x"} {
				if f, err := fsys.Create(name); err == nil {
					f.Close()
					t.Errorf("walk %v: created %s through a symlink", walk, name)
				}
				if err := fsys.Mkdir(name, 0o755); err == nil {
					t.Errorf("walk %v: made directory %s through a symlink", walk, name)
				}
				if err := fsys.Symlink("target", name); err == nil {
					t.Errorf("walk %v: made symlink %s through a symlink", walk, name)
				}
			}
			name := through + "/b" // a directory outside
			if _, err := fsys.Lstat(name); err == nil {
				t.Errorf("walk %v: looked %s up through a symlink", walk, name)
			}
			if c := fsys.Hold(name); c != nil {
				c.Close()
				t.Errorf("walk %v: held %s through a symlink", walk, name)
			}
			if err := fsys.Chmod(name, 0o700); err == nil {
				t.Errorf("walk %v: changed the mode of %s through a symlink", walk, name)
			}
			if err := fsys.Remove(name); err == nil {
				t.Errorf("walk %v: removed %s through a symlink", walk, name)
			}
		}
		top, err := os.ReadDir(outside)
		if err != nil || len(top) != 1 || top[0].Name() != "b" {
			t.Fatalf("walk %v: the directory the symlinks lead to holds %v (%v), want only b", walk, top, err)
		}
		below, err := os.ReadDir(b)
		if err != nil || len(below) != 0 {
			t.Fatalf("walk %v: b, which the symlinks lead into, holds %v (%v)", walk, below, err)
		}
		if after, err := os.Stat(b); err != nil || after.Mode() != before.Mode() {
			t.Fatalf("walk %v: b's mode %v (%v), was %v", walk, after.Mode(), err, before.Mode())
		}
		writeTemp(t, fsys, "c/e/f/x", "deep")
		if b, err := os.ReadFile(filepath.Join(dir, "c", "e", "f", "x")); err != nil || string(b) != "deep" {
			t.Fatalf("walk %v: c/e/f/x = %q, %v", walk, b, err)
		}
	}
}

// No name with a ".." element reaches out of the workspace, in any
// operation, whether directories are opened in one call or one name at a
// time.
func TestNoNameReachesOutOfTheWorkspace(t *testing.T) {
	for _, walk := range []bool{false, true} {
		dir, fsys := openTestRoot(t)
		if walk {
			fsys.dirs.beneath = noBeneath
		}
		mkdirs(t, fsys, "a")
		parent := filepath.Dir(dir)
		list := func() string {
			ents, err := os.ReadDir(parent)
			if err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(parent)
			if err != nil {
				t.Fatal(err)
			}
			return fmt.Sprint(ents, fi.Mode())
		}
		before := list()
		for _, name := range []string{"..", "../x", "a/../../x", "a/../..", "./x", "a//x"} {
			if f, err := fsys.Create(name); err == nil {
				f.Close()
				t.Errorf("walk %v: created %q", walk, name)
			}
			for what, err := range map[string]error{
				"made":     fsys.Mkdir(name, 0o755),
				"linked":   fsys.Symlink("target", name),
				"chmod-ed": fsys.Chmod(name, 0o700),
				"removed":  fsys.Remove(name),
				"renamed":  fsys.Rename("a", name),
			} {
				if err == nil {
					t.Errorf("walk %v: %s %q", walk, what, name)
				}
			}
			if _, err := fsys.Lstat(name); err == nil {
				t.Errorf("walk %v: looked %q up", walk, name)
			}
			if c := fsys.Hold(name); c != nil {
				c.Close()
				t.Errorf("walk %v: held %q", walk, name)
			}
		}
		if after := list(); after != before {
			t.Fatalf("walk %v: the workspace's parent went from %s to %s", walk, before, after)
		}
	}
}

// hasBeneath reports whether directories below dir open in one call here.
func hasBeneath(tb testing.TB, dir string) bool {
	fsys, closeFS, err := OpenRoot(dir, nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer closeFS()
	h, err := openBeneath(fsys.(rootFS).dirs.top.handle, ".")
	if err == nil {
		h.close()
	}
	return !errors.Is(err, errNoBeneath)
}

// BenchmarkOpenDirectories opens the directories of 120 files spread over
// a tree 8 levels deep, as a restore of an agent's edit does, in one call
// each (beneath) and through their parents (walk).
func BenchmarkOpenDirectories(b *testing.B) {
	dir := b.TempDir()
	var leaves []string
	for i := range 120 {
		parts := make([]string, 8)
		for level := range parts {
			parts[level] = fmt.Sprintf("d%d", (i>>level)%(level+2))
		}
		leaf := strings.Join(parts, "/")
		if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(leaf)), 0o755); err != nil {
			b.Fatal(err)
		}
		leaves = append(leaves, leaf)
	}
	for _, mode := range []string{"beneath", "walk"} {
		b.Run(mode, func(b *testing.B) {
			if mode == "beneath" && !hasBeneath(b, dir) {
				b.Skip("no openat2 here")
			}
			for b.Loop() {
				fsys, closeFS, err := OpenRoot(dir, nil)
				if err != nil {
					b.Fatal(err)
				}
				d := fsys.(rootFS).dirs
				if mode == "walk" {
					d.beneath = noBeneath
				}
				for _, leaf := range leaves {
					dr, err := d.acquire(leaf)
					if err != nil {
						b.Fatal(err)
					}
					d.release(dr)
				}
				closeFS()
			}
		})
	}
}
