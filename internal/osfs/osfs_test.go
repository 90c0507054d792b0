package osfs

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestTryLockExcludesASecondOpenFileEvenInTheSameProcess(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "lock")
	open := func() *os.File {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	a, b := open(), open()
	defer b.Close()
	if ok, err := TryLock(a); !ok || err != nil {
		t.Fatalf("first TryLock = %v, %v", ok, err)
	}
	if ok, err := TryLock(b); ok || err != nil {
		t.Fatalf("second TryLock while held = %v, %v; want false, nil", ok, err)
	}
	a.Close()
	if ok, err := TryLock(b); !ok || err != nil {
		t.Fatalf("TryLock after the holder closed = %v, %v", ok, err)
	}
}

func TestSyncsSucceedOnAFreshFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("data"); err != nil {
		t.Fatal(err)
	}
	if err := DataSync(f); err != nil {
		t.Fatalf("DataSync: %v", err)
	}
	if err := SyncDir(dir); err != nil {
		t.Fatalf("SyncDir: %v", err)
	}
	err = SyncFilesystem(dir)
	if runtime.GOOS == "linux" && err != nil || runtime.GOOS != "linux" && !errors.Is(err, ErrNoFilesystemSync) {
		t.Fatalf("SyncFilesystem on %s: %v", runtime.GOOS, err)
	}
}

func TestOpenRegularReadsAllWithEOFOnTheShortRead(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "f")
	want := bytes.Repeat([]byte("0123456789"), 10000)
	if err := os.WriteFile(path, want, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := OpenRegular(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	before, err := r.Stamp()
	if err != nil || before.Size != int64(len(want)) || r.Opened() != before {
		t.Fatalf("Stamp = %+v, %v; Opened = %+v", before, err, r.Opened())
	}
	got, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(got, want) || r.Err() != nil {
		t.Fatalf("ReadAll: %d bytes, %v, file err %v", len(got), err, r.Err())
	}
}

func TestStampMovesWhenTheFileChangesWhileOpen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := OpenRegular(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	before := r.Opened()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("more")
	f.Close()
	after, _ := r.Stamp()
	if after == before || r.Opened() != before {
		t.Fatalf("stamp unchanged after an append: %+v, or Opened moved: %+v", after, r.Opened())
	}
}

func TestOpenRegularRefusesADirectory(t *testing.T) {
	t.Parallel()
	if _, err := OpenRegular(t.TempDir()); err == nil {
		t.Fatal("OpenRegular of a directory succeeded")
	}
}

func TestIsDirNotEmpty(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.MkdirAll(filepath.Join(sub, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	err := os.Remove(sub)
	if !IsDirNotEmpty(err) {
		t.Fatalf("IsDirNotEmpty(%v) = false", err)
	}
	if IsDirNotEmpty(os.ErrNotExist) || IsSharingViolation(os.ErrNotExist) {
		t.Fatal("unrelated errors classified")
	}
}
