//go:build unix

package restore

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// A file created through a directory's descriptor takes every mode bit a
// checkpoint carries, the special ones included, and its content. (The
// sticky bit only as root: macOS refuses it on a file to anyone else.)
func TestCreatedFileTakesEveryModeBit(t *testing.T) {
	dir, fsys := openTestRoot(t)
	mkdirs(t, fsys, "a")
	modes := []fs.FileMode{0o644, 0o755 | fs.ModeSetuid, 0o750 | fs.ModeSetgid}
	if os.Geteuid() == 0 {
		modes = append(modes, 0o640|fs.ModeSticky)
	}
	for _, mode := range modes {
		f, err := fsys.Create(tempName("a/x", tempStem))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte("content")); err != nil {
			t.Fatal(err)
		}
		if err := f.Chmod(mode); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if err := fsys.Rename(f.Name(), "a/x"); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(filepath.Join(dir, "a", "x"))
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky); got != mode {
			t.Errorf("mode %v after Chmod(%v)", got, mode)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "a", "x")); string(b) != "content" {
			t.Errorf("content %q", b)
		}
	}
}

// The directories a restore keeps open hold at most an eighth of the
// descriptors the process may open, unless that is below minOpenDirs.
func TestOpenDirectoriesLeaveMostDescriptors(t *testing.T) {
	var l unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &l); err != nil {
		t.Fatal(err)
	}
	n := openDirsBound()
	if n < minOpenDirs || n > maxOpenDirs || uint64(n) > max(uint64(l.Cur)/8, minOpenDirs) {
		t.Fatalf("%d directories kept open with a limit of %d files", n, l.Cur)
	}
}

// A name that is not UTF-8 is a name: it is written where a name with a
// ".." element is refused.
func TestNamesThatAreNotUTF8AreWritten(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("APFS takes UTF-8 names only")
	}
	dir, fsys := openTestRoot(t)
	mkdirs(t, fsys, "a\xff")
	writeTemp(t, fsys, "a\xff/\xfe", "bytes")
	if b, err := os.ReadFile(filepath.Join(dir, "a\xff", "\xfe")); err != nil || string(b) != "bytes" {
		t.Fatalf("a\\xff/\\xfe = %q, %v", b, err)
	}
}
