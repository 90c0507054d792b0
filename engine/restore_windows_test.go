package engine

import (
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/windows"

	"github.com/ckpt/ckpt/internal/testtree"
)

// TestRestoreOverAFileHeldOpenIsAConflict holds a file open without
// FILE_SHARE_DELETE, as many Windows programs do: the restore cannot rename
// over it, retries briefly, then reports the path as a conflict that names
// the cause and restores everything else; once the handle is closed the
// same restore finishes.
func TestRestoreOverAFileHeldOpenIsAConflict(t *testing.T) {
	f := newFixture(t, testtree.Dir{"held.txt": testtree.File{Content: "v1"}, "free.txt": testtree.File{Content: "v1"}})
	f.save("v1")
	f.write("held.txt", "v2")
	f.write("free.txt", "v2")
	f.save("v2")
	name, err := windows.UTF16PtrFromString(filepath.Join(f.ws, "held.txt"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := windows.CreateFile(name, windows.GENERIC_READ, windows.FILE_SHARE_READ, nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		t.Fatal(err)
	}
	res := f.restore("@1", RestoreOptions{})
	windows.CloseHandle(h)
	if len(res.Conflicts) != 1 || res.Conflicts[0].Path != "held.txt" || !strings.Contains(res.Conflicts[0].Reason, "another program has this file open") {
		t.Fatalf("conflicts = %+v, want held.txt held open", res.Conflicts)
	}
	if got := f.readFile("free.txt"); got != "v1" {
		t.Fatalf("free.txt = %q, want v1", got)
	}
	if got := f.readFile("held.txt"); got != "v2" {
		t.Fatalf("held.txt = %q, want its current content v2", got)
	}
	if res := f.restore("@1", RestoreOptions{}); len(res.Conflicts) != 0 || f.readFile("held.txt") != "v1" {
		t.Fatalf("after the handle closed: conflicts %+v, held.txt %q", res.Conflicts, f.readFile("held.txt"))
	}
}
