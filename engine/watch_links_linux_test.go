package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// A hard link made inside the workspace after a save, in another
// directory than the file's, makes the file's content changeable through
// the new name with no event in the file's own directory (the link count
// changes with none). A watched save that finds the new link walks
// everything once, and the file's directory is listed at every save
// after: the watched saves equal cold ones, whether the write through the
// link comes in a later save or before the save that finds the link, and
// whether or not the new name's directory already held a file with
// another link (and so was listed at every save already: the link it
// gains is no less new).
func TestAHardLinkMadeInsideTheWorkspaceIsFollowed(t *testing.T) {
	for _, beside := range []bool{false, true} {
		for _, sameSave := range []bool{false, true} {
			ws, outside := t.TempDir(), t.TempDir()
			for _, d := range []string{"a", "b", "c"} {
				if err := os.Mkdir(filepath.Join(ws, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			write := func(rel, content string) {
				t.Helper()
				if err := os.WriteFile(filepath.Join(ws, rel), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write("a/f", "original\n")
			write("c/other", "other\n")
			if beside {
				write("b/linked", "linked from outside\n")
				if err := os.Link(filepath.Join(ws, "b/linked"), filepath.Join(outside, "linked")); err != nil {
					t.Fatal(err)
				}
			}
			compare := watchedAndCold(t, ws)
			step := func(what string) string {
				return fmt.Sprintf("%s (beside another link: %v; written through in the save that finds it: %v)", what, beside, sameSave)
			}
			compare(step("first save"))
			if err := os.Link(filepath.Join(ws, "a/f"), filepath.Join(ws, "b/g")); err != nil {
				t.Fatal(err)
			}
			if !sameSave {
				compare(step("the link made"))
			}
			write("b/g", "written through the link\n")
			compare(step("written through the link"))
			write("b/g", "and again\n")
			compare(step("written again"))
		}
	}
}

// A file bind-mounted onto a workspace file below the root: a write
// through its workspace path (or its source's) raises its events in the
// source's directory, not the workspace's, so the watcher names the
// mounted file changed at every save, and the watched saves equal cold
// ones.
func TestAFileMountedInsideTheWorkspaceIsFollowed(t *testing.T) {
	inside, unavailable := inMountNamespace(t)
	if !inside {
		if unavailable != "" {
			t.Skip(unavailable)
		}
		return // it ran in its own mount namespace
	}
	ws, outside := t.TempDir(), t.TempDir()
	defer unmountBelow(t, ws)
	if err := os.MkdirAll(filepath.Join(ws, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	target, src := filepath.Join(ws, "a", "b", "f"), filepath.Join(outside, "src")
	for _, f := range []string{target, src} {
		if err := os.WriteFile(f, []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	compare := watchedAndCold(t, ws)
	compare("first save")
	if err := unix.Mount(src, target, "", unix.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	compare("the file mounted")
	for i, through := range []string{target, src, target} {
		if err := os.WriteFile(through, []byte(fmt.Sprintf("write %d, longer than the last\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
		compare("written through " + through)
	}
	if err := unix.Unmount(target, 0); err != nil {
		t.Fatal(err)
	}
	compare("unmounted")
}

// watchedAndCold opens a watched Engine and a cold one on ws and returns a
// step that saves with both and fails unless their roots are equal.
func watchedAndCold(t *testing.T, ws string) (compare func(step string)) {
	watched := openAt(t, ws, Options{Watch: true, Profile: "none"})
	cold := openAt(t, ws, Options{Profile: "none"})
	return func(step string) {
		t.Helper()
		got, _ := saveRoot(t, watched)
		want, _ := saveRoot(t, cold)
		if got != want {
			t.Fatalf("%s: watched root %s, cold %s; watched only %q, cold only %q", step,
				got, want, onlyIn(t, watched, got, cold, want), onlyIn(t, cold, want, watched, got))
		}
	}
}
