package osfs

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestOpenSharedLetsTheFileBeDeletedWhileItIsRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "obj")
	if err := os.WriteFile(path, []byte("content"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := OpenShared(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.Remove(path); err != nil {
		t.Fatalf("remove while open: %v", err)
	}
	got, err := io.ReadAll(f)
	if err != nil || string(got) != "content" {
		t.Fatalf("read after remove = %q, %v", got, err)
	}
	if _, err := OpenShared(filepath.Join(t.TempDir(), "missing")); !os.IsNotExist(err) {
		t.Fatalf("OpenShared(missing) = %v, want not-exist", err)
	}
}
