package faultfs

import (
	"errors"
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

func mustWrite(t *testing.T, y vfs.FS, name, data string, sync bool) vfs.File {
	t.Helper()
	f, err := y.Create(name, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte(data)); err != nil {
		t.Fatal(err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func syncDir(t *testing.T, y vfs.FS, dir string) {
	t.Helper()
	d, err := y.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
}

func content(t *testing.T, y *MemFS, name string) (string, bool) {
	t.Helper()
	f, err := y.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	b := make([]byte, st.Size())
	if n, _ := f.ReadAt(b, 0); n != len(b) {
		t.Fatalf("read %d of %d bytes", n, len(b))
	}
	return string(b), true
}

// TestCrashKeepsOnlyWhatWasSynced checks MemFS's power-cut rule: file data
// survives only up to its file's last sync, a name only once its directory
// was synced after it changed.
func TestCrashKeepsOnlyWhatWasSynced(t *testing.T) {
	y := NewMem()
	dir := filepath.Join(string(filepath.Separator), "store")
	if err := y.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	synced := filepath.Join(dir, "synced")
	f := mustWrite(t, y, synced, "durable", true)
	if _, err := f.Write([]byte(" and not")); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, y, filepath.Join(dir, "unsynced"), "lost", false)

	// The directory itself is not in its parent yet: everything goes.
	if _, ok := content(t, y.Crash(CrashConfig{}), synced); ok {
		t.Fatal("a file in a directory never synced into its parent survived")
	}
	syncDir(t, y, string(filepath.Separator))
	syncDir(t, y, dir)
	c := y.Crash(CrashConfig{})
	if got, ok := content(t, c, synced); !ok || got != "durable" {
		t.Fatalf("synced file after the crash: %q %v, want its synced bytes", got, ok)
	}
	if got, _ := content(t, c, filepath.Join(dir, "unsynced")); got != "" {
		t.Fatalf("unsynced data survived: %q", got)
	}
	if got, ok := content(t, y, synced); !ok || got != "durable and not" {
		t.Fatalf("the crash changed the running file system: %q", got)
	}

	// A rename and a removal are undone until the directory is synced.
	renamed := filepath.Join(dir, "renamed")
	if err := y.Rename(synced, renamed); err != nil {
		t.Fatal(err)
	}
	c = y.Crash(CrashConfig{})
	if _, ok := content(t, c, synced); !ok {
		t.Fatal("an unsynced rename took the old name away")
	}
	if _, ok := content(t, c, renamed); ok {
		t.Fatal("an unsynced rename made the new name durable")
	}
	syncDir(t, y, dir)
	if err := y.Remove(renamed); err != nil {
		t.Fatal(err)
	}
	if _, ok := content(t, y.Crash(CrashConfig{}), renamed); !ok {
		t.Fatal("an unsynced removal was durable")
	}
}

func TestTruncateIsDurableOnlyOnceSynced(t *testing.T) {
	y := NewMem()
	name := filepath.Join(string(filepath.Separator), "pack")
	f := mustWrite(t, y, name, "0123456789", true)
	syncDir(t, y, string(filepath.Separator))
	w := Wrap(y, InjectorFunc(func(Op) error { return nil }))
	rw, err := w.OpenReadWrite(name, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	tr, ok := rw.(interface{ Truncate(int64) error })
	if !ok {
		t.Fatal("Wrap hides Truncate")
	}
	if err := tr.Truncate(4); err != nil {
		t.Fatal(err)
	}
	if got, _ := content(t, y.Crash(CrashConfig{}), name); got != "0123456789" {
		t.Fatalf("unsynced truncation survived: %q", got)
	}
	if err := rw.Sync(); err != nil {
		t.Fatal(err)
	}
	if got, _ := content(t, y.Crash(CrashConfig{}), name); got != "0123" {
		t.Fatalf("synced truncation: %q", got)
	}
	f.Close()
}

func TestNthFailsTheChosenChangeAndTearsWrites(t *testing.T) {
	y := NewMem()
	h := &Nth{FailAt: 1, Errno: syscall.ENOSPC}
	w := Wrap(y, h)
	name := filepath.Join(string(filepath.Separator), "f")
	f, err := w.Create(name, vfs.WriteCategoryUnspecified) // change 0
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Stat(name); err != nil { // not a change: not counted
		t.Fatal(err)
	}
	n, err := f.Write([]byte("abcdef")) // change 1: fails torn
	if !errors.Is(err, syscall.ENOSPC) || n != 3 || h.Hit() != "write "+name {
		t.Fatalf("write: %d %v, hit %q", n, err, h.Hit())
	}
	if got, _ := content(t, y, name); got != "abc" {
		t.Fatalf("torn write left %q", got)
	}
	if err := f.Sync(); err != nil || h.Seen() != 3 {
		t.Fatalf("sync: %v, %d changes seen", err, h.Seen())
	}
}

// The volume's root is durable on every platform: a directory made below
// it and synced into it (C:\ included on Windows) survives a crash.
func TestDirectoriesSyncedIntoTheVolumeRootSurviveACrash(t *testing.T) {
	y := NewMem()
	top := filepath.Join(filepath.VolumeName(t.TempDir())+string(filepath.Separator), "top")
	if err := y.MkdirAll(top, 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := y.OpenDir(filepath.Dir(top))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if _, err := y.Crash(CrashConfig{}).Stat(top); err != nil {
		t.Fatalf("%s after a crash: %v", top, err)
	}
}
