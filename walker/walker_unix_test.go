//go:build linux || darwin

package walker

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// FIFOs, sockets, devices and mode bits exist only on Unix; Windows has
// none of the special files and synthesises mode bits (see Entry).

func TestSpecialFilesSkippedWithoutOpening(t *testing.T) {
	root := t.TempDir()
	tree{"f": "x", "ignored/": ""}.write(t, root)
	for _, p := range []string{"fifo", "ignored/fifo"} {
		if err := unix.Mkfifo(filepath.Join(root, p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A FIFO named like a pattern file must not block the walk either.
	if err := unix.Mkfifo(filepath.Join(root, ".gitignore"), 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(root, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := unix.Mknod(filepath.Join(root, "null"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil && !errors.Is(err, unix.EPERM) {
		t.Fatal(err)
	}
	// Opening a FIFO blocks forever and cannot be cancelled, so a regression
	// would hang inside Walk: fail on a deadline instead.
	type outcome struct {
		res walkResult
		err error
	}
	ch := make(chan outcome, 1)
	go func() {
		res, err := walkAll(t, context.Background(), root, Options{Extra: []string{"ignored/"}})
		ch <- outcome{res, err}
	}()
	var res walkResult
	select {
	case o := <-ch:
		if o.err != nil {
			t.Fatal(o.err)
		}
		res = o.res
	case <-time.After(hang):
		t.Fatal("walk did not finish: a FIFO was opened")
	}
	got := skippedByPath(res)
	want := map[string]string{"fifo": ReasonFIFO, ".gitignore": ReasonFIFO, "sock": ReasonSocket}
	if _, err := os.Lstat(filepath.Join(root, "null")); err == nil {
		want["null"] = ReasonDevice
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("skipped = %v, want %v", got, want)
	}
	if !slices.Equal(res.files, []string{"f"}) {
		t.Fatalf("files = %q", res.files)
	}
}

func TestUnreadableDirectoryAsNonRoot(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root, which reads any directory; TestUnreadableInjected covers the path")
	}
	root := t.TempDir()
	tree{"a/secret/f": "x", "a/ok": "x", "b": "x"}.write(t, root)
	locked := filepath.Join(root, "a", "secret")
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(locked, 0o755)
	res := mustWalk(t, root, Options{})
	if !slices.Equal(res.files, []string{"a/ok", "b"}) {
		t.Fatalf("files = %q", res.files)
	}
	if len(res.skipped) != 1 || res.skipped[0].Path != "a/secret" || !errors.Is(res.skipped[0].Err, fs.ErrPermission) {
		t.Fatalf("skipped = %+v", res.skipped)
	}
}

func TestEmptyDirectoriesAndModes(t *testing.T) {
	root := t.TempDir()
	tree{"empty/": "", "x/y/": "", "exec": "#!"}.write(t, root)
	if err := os.Chmod(filepath.Join(root, "exec"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "empty"), 0o700); err != nil {
		t.Fatal(err)
	}
	res := mustWalk(t, root, Options{})
	if !slices.Equal(res.dirs, []string{"empty", "x", "x/y"}) {
		t.Fatalf("dirs = %q", res.dirs)
	}
	if m := res.entries["exec"].Mode; m != 0o755 {
		t.Errorf("exec mode %o", m)
	}
	if m := res.entries["empty"].Mode; m != 0o700 {
		t.Errorf("empty mode %o", m)
	}
}

// A directory reports a pattern file its own rules exclude that has
// another hard link; one with a single link, or an included one (in
// Entries with its Nlink), it does not.
func TestDirReportsAnExcludedRuleFileWithAnotherLink(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	tree{"self/.gitignore": ".gitignore\n", "self/f": "f", "kept/.gitignore": "x\n", "alone/.gitignore": ".gitignore\n"}.write(t, root)
	for _, d := range []string{"self", "kept"} {
		if err := os.Link(filepath.Join(root, d, ".gitignore"), filepath.Join(outside, d)); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	got := map[string]bool{}
	_, _, err := Walk(context.Background(), root, Options{Profile: "none"}, func(_ context.Context, d *Dir, _ map[string]int) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		got[d.Path] = d.ExcludedRuleLinked
		return 0, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]bool{"": false, "self": true, "kept": false, "alone": false}; !maps.Equal(got, want) {
		t.Fatalf("ExcludedRuleLinked by directory = %v, want %v", got, want)
	}
}
