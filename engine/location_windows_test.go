package engine

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestDefaultStoreDirIsUnderLocalAppData: on Windows the stores live in
// %LOCALAPPDATA%\ckpt, where per-user, non-roaming application data goes.
func TestDefaultStoreDirIsUnderLocalAppData(t *testing.T) {
	local := t.TempDir()
	t.Setenv("LOCALAPPDATA", local)
	dir, err := DefaultStoreDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(local, "ckpt", "workspaces") + `\`; !strings.HasPrefix(dir, want) {
		t.Fatalf("DefaultStoreDir = %s, want it under %s", dir, want)
	}
}
