package testmount

import (
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// ReadOnly returns a read-only view of dir: a bind mount of it, remounted
// read-only, where every write fails with EROFS while dir itself stays
// writable (the same files, reached through two mounts). It is unmounted
// when the test ends. The test is skipped where the process may not mount
// (it needs root, or CAP_SYS_ADMIN).
func ReadOnly(t testing.TB, dir string) string {
	t.Helper()
	view := filepath.Join(t.TempDir(), "read-only")
	if err := unix.Mkdir(view, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(dir, view, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("cannot bind-mount %s (needs root or CAP_SYS_ADMIN): %v", dir, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(view, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", view, err)
		}
	})
	if err := unix.Mount("", view, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
		t.Fatalf("remount %s read-only: %v", view, err)
	}
	return view
}
