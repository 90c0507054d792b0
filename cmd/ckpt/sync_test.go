package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/engine"
)

// fileURL is the file:// URL of directory dir (file:///C:/x on Windows).
func fileURL(dir string) string {
	p := filepath.ToSlash(dir)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return "file://" + p
}

// damageRemote flips a byte in the middle of every object of a file://
// remote directory under sub (data, meta or heads).
func damageRemote(t *testing.T, dir, sub string) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, sub))
	if err != nil || len(ents) == 0 {
		t.Fatalf("remote %s/%s: %v", dir, sub, err)
	}
	for _, ent := range ents {
		p := filepath.Join(dir, sub, ent.Name())
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 0x20
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCLIPushAndCloneReproduceTheWorkspace(t *testing.T) {
	src := newEnv(t)
	src.write("a.txt", "alpha\n")
	src.write("sub/b.bin", "\x00\x01binary")
	src.ok("save", "-m", "one")
	dir := t.TempDir()
	url := fileURL(dir)
	src.ok("remote", "add", "origin", url)
	if got := decode[remotesJSON](t, src.ok("remote", "list", "--json")); len(got.Remotes) != 1 || got.Remotes[0].URL != url {
		t.Fatalf("remote list: %+v", got)
	}
	push := decode[pushJSON](t, src.ok("push", "--json"))
	if push.Checkpoints != 1 || push.Traffic.ObjectsUp != 1 || push.Traffic.SegmentsUp != 1 {
		t.Fatalf("push: %+v", push)
	}
	if again := decode[pushJSON](t, src.ok("push", "--json")); !again.UpToDate || again.Traffic.Puts != 0 {
		t.Fatalf("second push: %+v", again)
	}

	dst := newEnv(t)
	dst.ws = filepath.Join(dst.ws, "new") // clone creates it
	clone := decode[cloneJSON](t, dst.ok("clone", url, "--json"))
	if clone.Head != push.Head || clone.Written != 2 {
		t.Fatalf("clone: %+v, push head %s", clone, push.Head)
	}
	for _, f := range []string{"a.txt", "sub/b.bin"} {
		want, _ := os.ReadFile(filepath.Join(src.ws, f))
		got, err := os.ReadFile(filepath.Join(dst.ws, f))
		if err != nil || string(got) != string(want) {
			t.Fatalf("%s: %q, %v; want %q", f, got, err, want)
		}
	}

	// The source saves again; the clone pulls, and cat fetches the new blob.
	src.write("a.txt", "alpha two\n")
	src.ok("save", "-m", "two")
	src.ok("push")
	pull := decode[pullJSON](t, dst.ok("pull", "--json"))
	if pull.Checkpoints != 1 || !pull.Moved {
		t.Fatalf("pull: %+v", pull)
	}
	if got := dst.ok("cat", "HEAD", "a.txt"); got != "alpha two\n" {
		t.Fatalf("cat after pull = %q", got)
	}
}

func TestCLISyncExitCodes(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "alpha\n")
	e.ok("save")
	if r := e.run("", "push"); r.code != exitUsage || !strings.Contains(r.stderr, "remote add") {
		t.Fatalf("push without a remote: exit %d %s", r.code, r.stderr)
	}
	dir := t.TempDir()
	url := fileURL(dir)
	e.ok("remote", "add", "origin", url)
	if r := e.run("", "remote", "add", "origin", url); r.code != exitUsage {
		t.Fatalf("adding a name twice: exit %d %s", r.code, r.stderr)
	}
	if r := e.run("", "push", "nosuch"); r.code != exitUsage {
		t.Fatalf("push to an unknown remote: exit %d %s", r.code, r.stderr)
	}
	if r := e.run("", "push", "--task", "nosuch"); r.code != exitUsage {
		t.Fatalf("push of an unknown task: exit %d %s", r.code, r.stderr)
	}
	e.ok("push")
	for _, sub := range []string{"data", "meta"} {
		t.Run(sub, func(t *testing.T) {
			damaged := t.TempDir()
			if err := os.CopyFS(damaged, os.DirFS(dir)); err != nil {
				t.Fatal(err)
			}
			damageRemote(t, damaged, sub)
			c := newEnv(t)
			r := c.run("", "clone", fileURL(damaged))
			if r.code != exitCorrupted {
				t.Fatalf("clone of a remote with damaged %s: exit %d %s", sub, r.code, r.stderr)
			}
		})
	}
	// Object files cut short, inside their header and after it.
	for _, size := range []int64{10, 50} {
		t.Run(fmt.Sprint("data truncated to ", size), func(t *testing.T) {
			cut := t.TempDir()
			if err := os.CopyFS(cut, os.DirFS(dir)); err != nil {
				t.Fatal(err)
			}
			ents, err := os.ReadDir(filepath.Join(cut, "data"))
			if err != nil || len(ents) == 0 {
				t.Fatalf("data objects: %v %v", ents, err)
			}
			for _, ent := range ents {
				if err := os.Truncate(filepath.Join(cut, "data", ent.Name()), size); err != nil {
					t.Fatal(err)
				}
			}
			r := newEnv(t).run("", "clone", fileURL(cut))
			if r.code != exitCorrupted || !strings.Contains(r.stderr, "corrupt") {
				t.Fatalf("clone of a remote with truncated data objects: exit %d %s", r.code, r.stderr)
			}
		})
	}
}

func TestHostPushAndPullMethods(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := engine.Open(ctx, ws, engine.Options{StoreDir: filepath.Join(t.TempDir(), "store")})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	h := newHost(&app{task: engine.DefaultTask}, e, nil)
	if _, err := e.Save(ctx, engine.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.push(ctx, syncParams{}); exitCodeOf(err) != exitUsage {
		t.Fatalf("push without a remote: %v", err)
	}
	if err := e.AddRemote(ctx, "backup", fileURL(t.TempDir())); err != nil {
		t.Fatal(err)
	}
	push, err := h.push(ctx, syncParams{})
	if err != nil || push.Remote != "backup" || push.Checkpoints != 1 {
		t.Fatalf("push: %+v, %v", push, err)
	}
	pull, err := h.pull(ctx, syncParams{Remote: "backup"})
	if err != nil || pull.Checkpoints != 0 || pull.Moved || pull.Head != push.Head {
		t.Fatalf("pull of what was pushed: %+v, %v", pull, err)
	}
}

func TestCLIRemoteGC(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	e.ok("remote", "add", "origin", fileURL(dir))
	for _, v := range []string{"one\n", "two\n", "three\n"} {
		e.write("a.txt", v)
		e.ok("save")
		e.ok("push")
	}
	first := decode[remoteGCJSON](t, e.ok("gc", "--remote", "origin", "--keep-last", "1", "--grace", "1ns", "--json"))
	if first.Tasks != 1 || first.Dropped != 2 || first.Marked == 0 {
		t.Fatalf("gc --remote: %+v", first)
	}
	second := decode[remoteGCJSON](t, e.ok("gc", "--remote", "origin", "--grace", "1ns", "--json"))
	if second.Deleted != first.Marked {
		t.Fatalf("second gc --remote: %+v after %+v", second, first)
	}
	if r := e.run("", "gc", "--remote", "nosuch"); r.code != exitUsage {
		t.Fatalf("gc of an unknown remote: exit %d", r.code)
	}
}

func TestCLIRemoteAddCreatesANewDirectoryOnFirstPush(t *testing.T) {
	for _, enc := range [][]string{nil, {"--new-key", filepath.Join(t.TempDir(), "remote.key")}} {
		t.Run(fmt.Sprint("encrypted=", enc != nil), func(t *testing.T) {
			e := newEnv(t)
			e.write("a.txt", "alpha\n")
			e.ok("save")
			url := fileURL(filepath.Join(t.TempDir(), "a", "new", "dir"))
			e.ok(append([]string{"remote", "add", "origin", url}, enc...)...)
			e.ok("push")
			c := newEnv(t)
			args := []string{"clone", url}
			if enc != nil {
				args = append(args, "--key-file", enc[1])
			}
			c.ok(args...)
			if got, err := os.ReadFile(filepath.Join(c.ws, "a.txt")); err != nil || string(got) != "alpha\n" {
				t.Fatalf("clone of the new remote: %q, %v", got, err)
			}
		})
	}
}

func TestCLIRolledBackHeadExitsCorrupt(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	e.ok("remote", "add", "origin", fileURL(dir))
	e.write("a.txt", "one\n")
	e.ok("save")
	e.ok("push")
	old := t.TempDir()
	if err := os.CopyFS(old, os.DirFS(filepath.Join(dir, "heads"))); err != nil {
		t.Fatal(err)
	}
	e.write("a.txt", "two\n")
	e.ok("save")
	e.ok("push")
	if err := os.RemoveAll(filepath.Join(dir, "heads")); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(dir, "heads"), os.DirFS(old)); err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"pull", "push"} {
		if r := e.run("", verb); r.code != exitCorrupted || !strings.Contains(r.stderr, "rolled back") {
			t.Fatalf("%s of a rolled back head: exit %d %s", verb, r.code, r.stderr)
		}
	}
}
