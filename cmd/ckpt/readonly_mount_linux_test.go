package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/internal/testmount"
)

// A store on a read-only mount is read by every command that reads, and
// export (which opens the store for writing, to keep what it fetches)
// falls back to reading it; a command that writes fails at once with one
// line saying the store is not writable.
func TestCLIStoreOnAReadOnlyMount(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "one\n")
	e.ok("save", "-m", "one")
	e.write("a.txt", "two\n")
	e.ok("save", "-m", "two")
	ro := *e
	ro.store = testmount.ReadOnly(t, e.store)

	for _, args := range [][]string{{"list"}, {"stats"}, {"tasks"}, {"verify"}, {"diff", "@1", "@2"}, {"log", "a.txt"}} {
		ro.ok(args...)
	}
	if got := ro.ok("cat", "@1", "a.txt"); got != "one\n" {
		t.Fatalf("cat @1 a.txt = %q", got)
	}
	dir := filepath.Join(t.TempDir(), "export")
	ro.ok("export", "@1", dir)
	if b, err := os.ReadFile(filepath.Join(dir, "a.txt")); err != nil || string(b) != "one\n" {
		t.Fatalf("exported a.txt = %q, %v", b, err)
	}
	e.write("a.txt", "three\n")
	r := ro.run("", "save")
	if r.code != 1 || !strings.HasPrefix(r.stderr, "ckpt: store is not writable: ") || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("save into a read-only mount: exit %d, stderr %q; want exit 1 and one line saying the store is not writable", r.code, r.stderr)
	}
}

// A --state-out FILE on a read-only mount, new or existing, fails the
// restore before it changes anything (which the FILE's directory alone
// would not tell).
func TestCLIStateOutOnAReadOnlyMountFailsFirst(t *testing.T) {
	e := newEnv(t)
	e.write("f", "v1")
	if r := e.run(`{"turn":1}`, "save", "--state", "-", "-m", "one"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	e.write("f", "v2")
	e.ok("save", "-m", "two")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "old.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	ro := testmount.ReadOnly(t, dir)
	for _, name := range []string{"new.json", "old.json"} {
		r := e.run("", "restore", "@1", "--only", "both", "--state-out", filepath.Join(ro, name))
		if r.code != 1 || !strings.Contains(r.stderr, "write state") || !strings.Contains(r.stderr, "read-only file system") {
			t.Fatalf("restore --state-out %s on a read-only mount: exit %d %q", name, r.code, r.stderr)
		}
		if got := e.read("f"); got != "v2" {
			t.Fatalf("the refused restore changed f to %q", got)
		}
	}
}
