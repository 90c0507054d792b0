//go:build unix

package osfs

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

func TestOpenRegularNeverFollowsASymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("x"), 0o600)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenRegular(link); !errors.Is(err, unix.ELOOP) {
		t.Fatalf("OpenRegular(symlink) = %v, want ELOOP", err)
	}
}

// A FIFO that replaced a file between the walk and the read is refused
// without blocking: without O_NONBLOCK this open would wait for a writer
// forever and the test would time out.
func TestOpenRegularRefusesAFIFOWithoutBlocking(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenRegular(fifo); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("OpenRegular(fifo) = %v, want ErrNotRegular", err)
	}
}

func TestUserDataDirFollowsXDGWhereItApplies(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_DATA_HOME", dir)
	got, err := UserDataDir()
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "darwin" {
		if filepath.Base(got) != "Application Support" {
			t.Fatalf("UserDataDir on darwin = %s", got)
		}
		return
	}
	if got != dir {
		t.Fatalf("UserDataDir = %s, want $XDG_DATA_HOME %s", got, dir)
	}
}

func TestIsSymlinkUnsupported(t *testing.T) {
	err := &os.LinkError{Op: "symlink", Old: "t", New: "l", Err: unix.EOPNOTSUPP}
	if !IsSymlinkUnsupported(err) || IsSymlinkUnsupported(&os.LinkError{Op: "symlink", Err: unix.EEXIST}) {
		t.Fatal("IsSymlinkUnsupported misclassifies")
	}
}
