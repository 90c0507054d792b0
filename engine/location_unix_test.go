//go:build unix && !darwin

package engine

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestDefaultStoreDirFollowsXDG: on Linux and other unixes the stores live
// in $XDG_DATA_HOME/ckpt.
func TestDefaultStoreDirFollowsXDG(t *testing.T) {
	data := t.TempDir()
	t.Setenv("XDG_DATA_HOME", data)
	dir, err := DefaultStoreDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(data, "ckpt", "workspaces") + "/"; !strings.HasPrefix(dir, want) {
		t.Fatalf("DefaultStoreDir = %s, want it under %s", dir, want)
	}
}
