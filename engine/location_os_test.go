//go:build !darwin

package engine

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestDefaultStoreDirFollowsThePlatform: stores live in
// $XDG_DATA_HOME/ckpt on Linux and other unixes, in %LOCALAPPDATA%\ckpt
// (per-user, non-roaming) on Windows.
func TestDefaultStoreDirFollowsThePlatform(t *testing.T) {
	data := t.TempDir()
	env := "XDG_DATA_HOME"
	if runtime.GOOS == "windows" {
		env = "LOCALAPPDATA"
	}
	t.Setenv(env, data)
	dir, err := DefaultStoreDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(data, "ckpt", "workspaces") + string(filepath.Separator); !strings.HasPrefix(dir, want) {
		t.Fatalf("DefaultStoreDir = %s, want it under %s", dir, want)
	}
}
