package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
)

// newRootsEnv is an env whose workspace is the roots front (app.ts) and
// back (main.go), given as -C each, in its ws.
func newRootsEnv(t *testing.T) (e *env, front, back string) {
	e = newEnv(t)
	front, back = filepath.Join(e.ws, "front"), filepath.Join(e.ws, "back")
	e.roots = []string{front, back}
	e.write("front/app.ts", "v1\n")
	e.write("back/main.go", "v1\n")
	return e, front, back
}

// TestCLIMultiRoot: -C given twice makes one store and one checkpoint
// over both directories, each under its directory's name; --root narrows
// save, list, diff, restore and export to one root; a restore of both
// rewinds both; the store refuses to be opened for one of them alone.
func TestCLIMultiRoot(t *testing.T) {
	t.Parallel()
	e, front, back := newRootsEnv(t)
	e.write("back/.gitignore", "*.tmp\n")
	e.write("back/cache.tmp", "ignored\n")
	first := decode[protocol.SaveJSON](t, e.ok("save", "--json", "-m", "both"))
	if first.Stats.Files != 3 {
		t.Fatalf("first save = %+v", first)
	}
	if got := e.ok("ls", "HEAD"); !strings.Contains(got, "back") || !strings.Contains(got, "front") {
		t.Fatalf("ls HEAD = %q", got)
	}

	e.write("front/app.ts", "v2\n")
	e.write("back/main.go", "v2\n")
	if got := e.ok("diff", "--name-status"); got != "M\tback/main.go\nM\tfront/app.ts\n" {
		t.Fatalf("diff --name-status = %q", got)
	}
	if got := e.ok("diff", "--name-status", "--root", "front"); got != "M\tfront/app.ts\n" {
		t.Fatalf("diff --root front = %q", got)
	}
	second := decode[protocol.SaveJSON](t, e.ok("save", "--json", "--root", "front", "-m", "front only"))
	if second.Stats.Modified != 1 {
		t.Fatalf("save --root front = %+v", second)
	}
	if got := e.ok("cat", "HEAD", "back/main.go"); got != "v1\n" {
		t.Fatalf("back/main.go after a save of front only = %q", got)
	}
	third := decode[protocol.SaveJSON](t, e.ok("save", "--json", "-m", "back too"))
	if list := e.ok("list", "--root", "back"); !strings.Contains(list, "back too") || strings.Contains(list, "front only") {
		t.Fatalf("list --root back:\n%s", list)
	}

	out := filepath.Join(t.TempDir(), "out")
	e.ok("export", "@1", out, "--root", "back")
	if b, err := os.ReadFile(filepath.Join(out, "back", "main.go")); err != nil || string(b) != "v1\n" {
		t.Fatalf("export --root back: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(out, "front")); !os.IsNotExist(err) {
		t.Fatalf("export --root back wrote front: %v", err)
	}

	res := decode[protocol.RestoreJSON](t, e.ok("restore", "@1", "--json"))
	if res.Written != 2 || len(res.Conflicts) != 0 {
		t.Fatalf("restore @1 = %+v", res)
	}
	for _, p := range []string{"front/app.ts", "back/main.go"} {
		if b, _ := os.ReadFile(filepath.Join(e.ws, p)); string(b) != "v1\n" {
			t.Fatalf("%s after restore = %q", p, b)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(back, "cache.tmp")); string(b) != "ignored\n" {
		t.Fatalf("an ignored file of root back changed: %q", b)
	}
	e.ok("restore", third.ID, "--root", "front")
	if b, _ := os.ReadFile(filepath.Join(front, "app.ts")); string(b) != "v2\n" {
		t.Fatalf("restore --root front: app.ts = %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(back, "main.go")); string(b) != "v1\n" {
		t.Fatalf("restore --root front changed back/main.go: %q", b)
	}

	if r := e.run("", "diff", "--root", "side"); r.code != protocol.ExitUsage || !strings.Contains(r.stderr, "not a root") {
		t.Fatalf("--root side: exit %d %q", r.code, r.stderr)
	}
	if out := e.ok("stats"); !strings.Contains(out, "multi-root workspace") {
		t.Fatalf("stats does not say why no watcher:\n%s", out)
	}
	single := &env{t: t, ws: front, store: e.store, home: e.home}
	if r := single.run("", "list"); r.code != protocol.ExitRefused {
		t.Fatalf("one root alone on the multi-root store: exit %d %q", r.code, r.stderr)
	}
}

// A listening server of a multi-root workspace: a JSON-RPC client
// attaches with the roots (and is refused with another set), the
// initialize event and the attach result name them, a save's roots param
// reads only those roots, a diff's paths take a root's name, and a
// command forwarded with the same -C flags runs through the server.
func TestResidentServerOfMultiRootWorkspace(t *testing.T) {
	e, front, back := newRootsEnv(t)
	e.listenServer()
	c := e.dialRPC()
	roots := []map[string]string{{"dir": front}, {"dir": back}}
	attached := c.call("attach", map[string]any{"roots": roots, "task": "agent"})
	var att protocol.AttachResult
	if json.Unmarshal(attached.Result, &att); attached.Error != nil || len(att.Roots) != 2 || att.Roots[0].Name != "back" {
		t.Fatalf("attach with the roots = %s %+v", attached.Result, attached.Error)
	}
	for name, params := range map[string]map[string]any{
		"fewer roots":   {"roots": roots[:1]},
		"renamed roots": {"roots": []map[string]string{{"dir": front}, {"name": "server", "dir": back}}},
		"one workspace": {"workspace": front},
	} {
		if r := e.dialRPC().call("attach", params); r.Error == nil || r.Error.Data.ExitCode != protocol.ExitRefused {
			t.Fatalf("attach with %s = %+v", name, r.Error)
		}
	}

	first := c.call("save", map[string]any{"message": "both"})
	var saved protocol.SaveJSON
	if json.Unmarshal(first.Result, &saved); first.Error != nil || saved.Stats.Files != 2 {
		t.Fatalf("save = %s %+v", first.Result, first.Error)
	}
	var init struct {
		WorkspaceDir string
		Roots        []struct{ Name, Dir string }
	}
	if len(c.events) == 0 || c.events[0].Method != "initialize" {
		t.Fatalf("events %v", c.eventTasks())
	}
	if json.Unmarshal(c.events[0].Params, &init); len(init.Roots) != 2 || init.Roots[1].Name != "front" || init.WorkspaceDir != att.Workspace {
		t.Fatalf("initialize event = %s", c.events[0].Params)
	}

	e.write("front/app.ts", "v2\n")
	e.write("back/main.go", "v2\n")
	diff := c.call("diff", map[string]any{"paths": []string{"back"}})
	var d protocol.DiffJSON
	if json.Unmarshal(diff.Result, &d); diff.Error != nil || len(d.Files) != 1 || d.Files[0].Path != "back/main.go" ||
		d.Files[0].Absolute != filepath.Join(back, "main.go") {
		t.Fatalf("diff of root back = %s %+v", diff.Result, diff.Error)
	}
	second := c.call("save", map[string]any{"roots": []string{"front"}})
	if json.Unmarshal(second.Result, &saved); second.Error != nil || saved.Stats.Modified != 1 {
		t.Fatalf("save of root front = %s %+v", second.Result, second.Error)
	}
	if got := e.ok("--lock-timeout", "0", "--task", "agent", "cat", "HEAD", "back/main.go"); got != "v1\n" {
		t.Fatalf("forwarded cat of back/main.go = %q", got)
	}
	bad := c.call("save", map[string]any{"roots": []string{"side"}})
	if bad.Error == nil || bad.Error.Data.ExitCode != protocol.ExitUsage {
		t.Fatalf("save of an unknown root = %+v", bad.Error)
	}
}

// A path given as an absolute path inside the workspace is the workspace's
// path, for every command that takes paths (restore, diff, log, export, ls,
// cat), cold and through a server (whose directory is not the client's):
// it was refused ("give paths relative to the workspace"). So is one through
// a symlink to the workspace, and one whose directories the workspace no
// longer holds. An absolute path outside the workspace stays a usage error
// naming it. Relative paths stay relative to the workspace.
func TestCLIAbsolutePathsInsideTheWorkspace(t *testing.T) {
	e := newEnv(t)
	e.write("sub/a.txt", "a1\n")
	e.write("b.txt", "b1\n")
	e.ok("save", "-m", "one")
	e.write("sub/a.txt", "a2\n")
	e.write("b.txt", "b2\n")
	e.ok("save", "-m", "two")
	abs := func(rel string) string { return filepath.Join(e.ws, filepath.FromSlash(rel)) }
	out := filepath.Join(t.TempDir(), "out")
	for _, server := range []bool{false, true} {
		if server {
			e.listenServer()
		}
		client := t.TempDir() // not the workspace, nor the server's directory
		run := func(args ...string) string {
			t.Helper()
			r := e.runIn(client, "", append([]string{"--lock-timeout", "0"}, args...)...)
			if r.code != 0 {
				t.Fatalf("server %v: ckpt %q: exit %d, stderr %q", server, args, r.code, r.stderr)
			}
			return r.stdout
		}
		if got := run("cat", "@1", abs("sub/a.txt")); got != "a1\n" {
			t.Fatalf("server %v: cat of an absolute path = %q", server, got)
		}
		if got := run("ls", "@1", abs("sub")); !strings.Contains(got, "sub/a.txt") {
			t.Fatalf("server %v: ls of an absolute path = %q", server, got)
		}
		if got := run("diff", "--name-status", "@1", "--", abs("b.txt")); got != "M\tb.txt\n" {
			t.Fatalf("server %v: diff of an absolute path = %q", server, got)
		}
		if got := run("diff", "--name-status", "@1", "--", e.ws); got != "M\tb.txt\nM\tsub/a.txt\n" {
			t.Fatalf("server %v: diff of the workspace's own path = %q", server, got)
		}
		if got := run("log", abs("sub")); strings.Count(got, "sub/a.txt") != 2 {
			t.Fatalf("server %v: log of an absolute path = %q", server, got)
		}
		os.RemoveAll(out)
		run("export", "@1", out, "--", abs("sub/a.txt"))
		if b, err := os.ReadFile(filepath.Join(out, "sub", "a.txt")); err != nil || string(b) != "a1\n" {
			t.Fatalf("server %v: export of an absolute path: %q, %v", server, b, err)
		}
		for _, path := range []string{"/nowhere/b.txt", filepath.Join(filepath.Dir(e.ws), "b.txt"), e.ws + "-not/b.txt"} {
			r := e.runIn(client, "", "--lock-timeout", "0", "restore", "@1", "--", path)
			if r.code != protocol.ExitUsage || !strings.Contains(r.stderr, fmt.Sprintf("%q", path)) || !strings.Contains(r.stderr, "outside the workspace") {
				t.Fatalf("server %v: restore of %s: exit %d, stderr %q; want exit 2 naming it outside the workspace", server, path, r.code, r.stderr)
			}
		}
		if got := e.read("b.txt"); got != "b2\n" {
			t.Fatalf("server %v: a refused restore changed b.txt: %q", server, got)
		}
	}
	// A file whose directory is gone, given through a symlink to the
	// workspace, is restored.
	if err := os.RemoveAll(abs("sub")); err != nil {
		t.Fatal(err)
	}
	through := abs("sub/a.txt")
	if runtime.GOOS != "windows" { // symlinks need a privilege there
		link := filepath.Join(t.TempDir(), "link")
		if err := os.Symlink(e.ws, link); err != nil {
			t.Fatal(err)
		}
		through = filepath.Join(link, "sub", "a.txt")
	}
	e.ok("--lock-timeout", "0", "restore", "@1", "--", through)
	if got := e.read("sub/a.txt"); got != "a1\n" {
		t.Fatalf("sub/a.txt after its restore through %s = %q", through, got)
	}
	if got := e.read("b.txt"); got != "b2\n" {
		t.Fatalf("b.txt = %q; the restore of sub/a.txt restored it", got)
	}
}

// In a multi-root workspace an absolute path inside a root is that root's
// path, under its name; one outside every root is a usage error.
func TestCLIAbsolutePathsInsideARoot(t *testing.T) {
	t.Parallel()
	e, front, back := newRootsEnv(t)
	e.ok("save", "-m", "one")
	e.write("front/app.ts", "v2\n")
	e.write("back/main.go", "v2\n")
	e.ok("save", "-m", "two")
	if got := e.ok("diff", "--name-status", "@1", "--", back); got != "M\tback/main.go\n" {
		t.Fatalf("diff of a root's own path = %q", got)
	}
	e.ok("restore", "@1", "--", filepath.Join(front, "app.ts"))
	if got, other := e.read("front/app.ts"), e.read("back/main.go"); got != "v1\n" || other != "v2\n" {
		t.Fatalf("after the restore of front's app.ts: front/app.ts %q, back/main.go %q", got, other)
	}
	if r := e.run("", "restore", "@1", "--", filepath.Join(e.ws, "elsewhere")); r.code != protocol.ExitUsage || !strings.Contains(r.stderr, "outside the workspace") {
		t.Fatalf("restore of a path beside the roots: exit %d, stderr %q; want exit 2", r.code, r.stderr)
	}
}
