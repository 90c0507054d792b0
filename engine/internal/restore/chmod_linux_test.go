package restore

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// The way a kernel without fchmodat2 changes a mode changes the file or
// directory named, and refuses a symlink (whose target lies outside).
func TestChmodThroughProcChangesTheEntryNotASymlinksTarget(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "t")
	for _, p := range []string{filepath.Join(dir, "f"), target} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "l")); err != nil {
		t.Fatal(err)
	}
	dirfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dirfd)
	for name, mode := range map[string]uint32{"f": 0o600, "d": 0o700} {
		if err := chmodThroughProc(dirfd, name, mode); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if fi, err := os.Lstat(filepath.Join(dir, name)); err != nil || uint32(fi.Mode().Perm()) != mode {
			t.Fatalf("%s: mode %v (%v), want %o", name, fi.Mode(), err, mode)
		}
	}
	if err := chmodThroughProc(dirfd, "l", 0o600); err != unix.ELOOP {
		t.Fatalf("a symlink: %v, want ELOOP", err)
	}
	if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("the symlink's target: %v (%v), want it unchanged", fi.Mode(), err)
	}
}
