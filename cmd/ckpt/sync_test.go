package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/engine/remote"
)

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
	t.Parallel()
	src := newEnv(t)
	src.write("a.txt", "alpha\n")
	src.write("sub/b.bin", "\x00\x01binary")
	src.ok("save", "-m", "one")
	dir := t.TempDir()
	url := remote.FileURL(dir)
	src.ok("remote", "add", "origin", url)
	if got := decode[protocol.RemotesJSON](t, src.ok("remote", "list", "--json")); len(got.Remotes) != 1 || got.Remotes[0].URL != url {
		t.Fatalf("remote list: %+v", got)
	}
	push := decode[protocol.PushJSON](t, src.ok("push", "--json"))
	if push.Checkpoints != 1 || push.Traffic.ObjectsUp != 1 || push.Traffic.SegmentsUp != 1 {
		t.Fatalf("push: %+v", push)
	}
	if again := decode[protocol.PushJSON](t, src.ok("push", "--json")); !again.UpToDate || again.Traffic.Puts != 0 {
		t.Fatalf("second push: %+v", again)
	}

	dst := newEnv(t)
	dst.ws = filepath.Join(dst.ws, "new") // clone creates it
	clone := decode[protocol.CloneJSON](t, dst.ok("clone", url, "--json"))
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
	// The workspace directory clone made has the user's umask (this
	// process's, as a directory it makes shows), not the 077 ckpt keeps its
	// store with.
	ref := filepath.Join(t.TempDir(), "ref")
	if err := os.Mkdir(ref, 0o777); err != nil {
		t.Fatal(err)
	}
	want, _ := os.Stat(ref)
	if fi, err := os.Stat(dst.ws); runtime.GOOS != "windows" && (err != nil || fi.Mode().Perm() != want.Mode().Perm()) {
		t.Errorf("the workspace clone made: %v, %v; want %v", fi.Mode(), err, want.Mode())
	}

	// The source saves again; the clone pulls, and cat fetches the new blob.
	src.write("a.txt", "alpha two\n")
	src.ok("save", "-m", "two")
	src.ok("push")
	pull := decode[protocol.PullJSON](t, dst.ok("pull", "--json"))
	if pull.Checkpoints != 1 || !pull.Moved {
		t.Fatalf("pull: %+v", pull)
	}
	if got := dst.ok("cat", "HEAD", "a.txt"); got != "alpha two\n" {
		t.Fatalf("cat after pull = %q", got)
	}
}

func TestCLISyncExitCodes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("a.txt", "alpha\n")
	e.ok("save")
	if r := e.run("", "push"); r.code != protocol.ExitUsage || !strings.Contains(r.stderr, "remote add") {
		t.Fatalf("push without a remote: exit %d %s", r.code, r.stderr)
	}
	dir := t.TempDir()
	url := remote.FileURL(dir)
	e.ok("remote", "add", "origin", url)
	if r := e.run("", "remote", "add", "origin", url); r.code != protocol.ExitUsage {
		t.Fatalf("adding a name twice: exit %d %s", r.code, r.stderr)
	}
	if r := e.run("", "push", "nosuch"); r.code != protocol.ExitUsage {
		t.Fatalf("push to an unknown remote: exit %d %s", r.code, r.stderr)
	}
	if r := e.run("", "push", "--task", "nosuch"); r.code != protocol.ExitUsage {
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
			r := c.run("", "clone", remote.FileURL(damaged))
			if r.code != protocol.ExitCorrupted {
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
			r := newEnv(t).run("", "clone", remote.FileURL(cut))
			if r.code != protocol.ExitCorrupted || !strings.Contains(r.stderr, "corrupt") {
				t.Fatalf("clone of a remote with truncated data objects: exit %d %s", r.code, r.stderr)
			}
		})
	}
}

func TestCLIRemoteGC(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := t.TempDir()
	e.ok("remote", "add", "origin", remote.FileURL(dir))
	for _, v := range []string{"one\n", "two\n", "three\n"} {
		e.write("a.txt", v)
		e.ok("save")
		e.ok("push")
	}
	first := decode[protocol.RemoteGCJSON](t, e.ok("gc", "--remote", "origin", "--keep-last", "1", "--grace", "1ns", "--json"))
	if first.Tasks != 1 || first.Dropped != 2 || first.Marked == 0 {
		t.Fatalf("gc --remote: %+v", first)
	}
	second := decode[protocol.RemoteGCJSON](t, e.ok("gc", "--remote", "origin", "--grace", "1ns", "--json"))
	if second.Deleted != first.Marked {
		t.Fatalf("second gc --remote: %+v after %+v", second, first)
	}
	if r := e.run("", "gc", "--remote", "nosuch"); r.code != protocol.ExitUsage {
		t.Fatalf("gc of an unknown remote: exit %d", r.code)
	}
	// No grace is refused, not taken for the default hour while saying
	// the objects marked go "0s from now".
	if r := e.run("", "gc", "--remote", "origin", "--grace", "0"); r.code != protocol.ExitUsage || !strings.Contains(r.stderr, "--grace 0s") {
		t.Fatalf("gc --remote --grace 0: exit %d %q; want a usage error", r.code, r.stderr)
	}
}

func TestCLIRemoteAddCreatesANewDirectoryOnFirstPush(t *testing.T) {
	t.Parallel()
	for _, enc := range [][]string{nil, {"--new-key", filepath.Join(t.TempDir(), "remote.key")}} {
		t.Run(fmt.Sprint("encrypted=", enc != nil), func(t *testing.T) {
			e := newEnv(t)
			e.write("a.txt", "alpha\n")
			e.ok("save")
			url := remote.FileURL(filepath.Join(t.TempDir(), "a", "new", "dir"))
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
	t.Parallel()
	e := newEnv(t)
	dir := t.TempDir()
	e.ok("remote", "add", "origin", remote.FileURL(dir))
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
		if r := e.run("", verb); r.code != protocol.ExitCorrupted || !strings.Contains(r.stderr, "rolled back") {
			t.Fatalf("%s of a rolled back head: exit %d %s", verb, r.code, r.stderr)
		}
	}
}

// cutOffClone pushes a one-file workspace to a file:// remote and clones
// it while the remote's data objects are truncated, which stops the clone
// while it writes; it then runs whileDamaged, unless nil, and puts the
// data back. It returns the clone's environment and the remote's
// directory.
func cutOffClone(t *testing.T, whileDamaged func(dst *env)) (dst *env, dir string) {
	t.Helper()
	src := newEnv(t)
	src.write("a.txt", "alpha\n")
	src.ok("save")
	dir = t.TempDir()
	src.ok("remote", "add", "origin", remote.FileURL(dir))
	src.ok("push")
	saved := t.TempDir()
	if err := os.CopyFS(saved, os.DirFS(filepath.Join(dir, "data"))); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "data"))
	for _, ent := range ents {
		if err := os.Truncate(filepath.Join(dir, "data", ent.Name()), 10); err != nil {
			t.Fatal(err)
		}
	}
	dst = newEnv(t)
	// The damage is the remote's: the message says the clone finishes
	// once the remote is mended, not that running it again (which fails
	// the same way) does, nor to verify this store, which is sound.
	if r := dst.run("", "clone", remote.FileURL(dir)); r.code != protocol.ExitCorrupted || !strings.Contains(r.stderr, "completes once the remote is mended") ||
		!strings.Contains(r.stderr, "once the remote is mended, the same ckpt clone run again finishes it") || !strings.Contains(r.stderr, "not in this store") || strings.Contains(r.stderr, "ckpt verify") {
		t.Fatalf("clone with truncated data objects: exit %d %s", r.code, r.stderr)
	}
	if whileDamaged != nil {
		whileDamaged(dst)
	}
	if err := os.RemoveAll(filepath.Join(dir, "data")); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(dir, "data"), os.DirFS(saved)); err != nil {
		t.Fatal(err)
	}
	return dst, dir
}

// A save in a clone cut off by damage on its remote fails and keeps the
// clone's restore pending, rather than dropping it and saving the files
// it had not written as deleted: once the remote is mended, the clone run
// again completes it.
func TestCLISaveInACloneCutOffByRemoteDamageKeepsItPending(t *testing.T) {
	t.Parallel()
	dst, dir := cutOffClone(t, func(dst *env) {
		if r := dst.run("", "save"); r.code != protocol.ExitCorrupted || !strings.Contains(r.stderr, "could not be completed") || !strings.Contains(r.stderr, "once the remote is mended") {
			t.Fatalf("save while the remote is damaged: exit %d %q", r.code, r.stderr)
		}
	})
	dst.ok("clone", remote.FileURL(dir))
	assertCloned(t, dst)
	if list := decode[protocol.LogJSON](t, dst.ok("list", "--json")); len(list.Checkpoints) != 1 {
		t.Fatalf("%d checkpoints in the clone, want the remote's one", len(list.Checkpoints))
	}
}

// Giving up the damaged remote's blobs (remote remove --force) lets the
// next write drop the clone's restore, which nothing could complete now.
func TestCLIRemovingTheDamagedRemoteLetsTheNextWriteGoOn(t *testing.T) {
	t.Parallel()
	cutOffClone(t, func(dst *env) {
		dst.ok("remote", "remove", "--force", "origin")
		dst.write("new.txt", "new work\n")
		r := dst.run("", "save")
		if r.code != 0 || !strings.Contains(r.stderr, "discarded an interrupted restore") || strings.Contains(r.stderr, "keeps it pending") {
			t.Fatalf("save once the damaged remote is removed: exit %d %q", r.code, r.stderr)
		}
		if got := dst.ok("cat", "HEAD", "new.txt"); got != "new work\n" {
			t.Fatalf("new.txt in the save: %q", got)
		}
	})
}

// assertCloned checks the file cutOffClone's workspace holds.
func assertCloned(t *testing.T, dst *env) {
	t.Helper()
	if got, err := os.ReadFile(filepath.Join(dst.ws, "a.txt")); err != nil || string(got) != "alpha\n" {
		t.Fatalf("the finished clone: %q, %v", got, err)
	}
}

func TestCLICloneThatFailedFinishesWhenRunAgain(t *testing.T) {
	t.Parallel()
	dst, dir := cutOffClone(t, nil)
	// The rerun completes the first run's restore, fetching as it writes,
	// and reports it as the clone's: it does not restore the head again.
	var res struct {
		protocol.CloneJSON
		protocol.NoticesJSON
	}
	if err := json.Unmarshal([]byte(dst.ok("--json", "clone", remote.FileURL(dir))), &res); err != nil {
		t.Fatal(err)
	}
	if res.Written != 1 || res.Fetched != 1 || res.CompletedRestore == nil || res.CompletedRestore.Restored != res.Head {
		t.Fatalf("the finished clone reports %+v, %+v; want the file written, its blob fetched, and the completed restore", res.CloneJSON, res.NoticesJSON)
	}
	assertCloned(t, dst)
}

func TestCLICloneRerunThatFailsReportsTheRestoreItCompleted(t *testing.T) {
	t.Parallel()
	dst, dir := cutOffClone(t, nil)
	// The rerun completes the first run's restore, then its pull finds no
	// head: its error document carries the completed restore.
	heads, hidden := filepath.Join(dir, "heads"), filepath.Join(dir, "heads.hidden")
	if err := os.Rename(heads, hidden); err != nil {
		t.Fatal(err)
	}
	r := dst.run("", "--json", "clone", remote.FileURL(dir))
	var failed struct {
		protocol.ErrorJSON
		protocol.NoticesJSON
	}
	if err := json.Unmarshal([]byte(r.stdout), &failed); err != nil || r.code == 0 || failed.Error.Message == "" ||
		failed.CompletedRestore == nil || failed.CompletedRestore.Written != 1 {
		t.Fatalf("a rerun whose pull fails after it completed the first run's restore: exit %d %s (%v); want the error and the completed restore", r.code, r.stdout, err)
	}
	assertCloned(t, dst)
	if err := os.Rename(hidden, heads); err != nil {
		t.Fatal(err)
	}
	if got := dst.ok("clone", remote.FileURL(dir)); !strings.Contains(got, "cloned task") {
		t.Fatalf("the clone run a third time: %q", got)
	}
	assertCloned(t, dst)
}

// A clone of a task the remote lacks imports nothing: it removes the
// store and the workspace directory it made (a directory that was there
// stays), and does not promise that running it again finishes it.
func TestCLICloneOfATaskTheRemoteLacksLeavesNothing(t *testing.T) {
	t.Parallel()
	url := remote.FileURL(t.TempDir())
	parent := t.TempDir()
	dst := &env{t: t, ws: filepath.Join(parent, "ws"), store: filepath.Join(parent, "store"), home: t.TempDir()}
	r := dst.run("", "clone", url)
	if r.code != protocol.ExitUsage || !strings.Contains(r.stderr, "nothing was cloned") || strings.Contains(r.stderr, "run again") ||
		!strings.Contains(r.stderr, "the remote holds no task at all") {
		t.Fatalf("clone from a remote that holds nothing: exit %d %q", r.code, r.stderr)
	}
	for _, dir := range []string{dst.ws, dst.store} {
		if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the failed clone left %s: %v", dir, err)
		}
	}
	if err := os.Mkdir(dst.ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := dst.run("", "clone", url); r.code != protocol.ExitUsage {
		t.Fatalf("clone into a directory that was there: exit %d %q", r.code, r.stderr)
	}
	if _, err := os.Stat(dst.ws); err != nil {
		t.Fatalf("the clone removed the workspace directory that was there: %v", err)
	}

	// With the default store, named after the workspace the clone makes.
	home := t.TempDir()
	def := &env{t: t, ws: filepath.Join(t.TempDir(), "ws"), home: home}
	if r := def.run("", "clone", url); r.code != protocol.ExitUsage || !strings.Contains(r.stderr, "nothing was cloned") {
		t.Fatalf("clone with the default store: exit %d %q", r.code, r.stderr)
	}
	var left []string
	filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "workspaces" {
			ents, _ := os.ReadDir(p)
			for _, e := range ents {
				left = append(left, e.Name())
			}
		}
		return nil
	})
	if _, err := os.Lstat(def.ws); len(left) > 0 || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the failed clone left stores %q and workspace %v", left, err)
	}
}

// A reader that pulls and brings its files up to the pulled head with a
// restore adds nothing to the task's history (its files were a
// checkpoint already: that is the restore's backup), so the writer's next
// push and the reader's next pull go on, where they found the task
// forked; the reader's push has nothing to send.
func TestCLIPullThenRestoreDoesNotForkTheTask(t *testing.T) {
	t.Parallel()
	a, url, _ := pushedWorkspace(t, "one\n")
	b := newEnv(t)
	b.ws = filepath.Join(b.ws, "clone")
	b.ok("clone", url)
	a.write("a.txt", "two\n")
	a.ok("save")
	a.ok("push")
	b.ok("pull")
	restored := decode[protocol.RestoreJSON](t, b.ok("restore", "--json", "HEAD"))
	if got := b.read("a.txt"); got != "two\n" {
		t.Fatalf("after pull and restore: a.txt %q", got)
	}
	if list := decode[protocol.LogJSON](t, b.ok("list", "--json")); len(list.Checkpoints) != 2 || restored.Backup != list.Checkpoints[0].ID {
		t.Fatalf("the reader's task after the restore: %+v, backup %s; want @1 and @2 alone, @1 the backup", list.Checkpoints, restored.Backup)
	}
	if push := decode[protocol.PushJSON](t, b.ok("push", "--json")); !push.UpToDate {
		t.Fatalf("the reader's push: %+v; want nothing to send", push)
	}
	a.write("a.txt", "three\n")
	a.ok("save")
	if push := decode[protocol.PushJSON](t, a.ok("push", "--json")); push.Forked != "" {
		t.Fatalf("the writer's push forked: %+v", push)
	}
	b.ok("pull")
	b.ok("restore", "HEAD")
	if got := b.read("a.txt"); got != "three\n" {
		t.Fatalf("after the second pull and restore: a.txt %q", got)
	}
}

// A clone into a directory that holds files of its own leaves those
// alone (exit 6) and says how to take the remote's version, in flags the
// commands take (clone has no --force), a way that adds nothing to the
// task the remote shares.
func TestCLICloneIntoAFilledDirectorySaysHowToTakeTheRemotes(t *testing.T) {
	t.Parallel()
	_, url, _ := pushedWorkspace(t, "remote\n")
	b := newEnv(t)
	b.write("a.txt", "mine\n")
	r := b.run("", "clone", url)
	if r.code != protocol.ExitConflicts || !strings.Contains(r.stderr, "ckpt: conflict: a.txt:") || strings.Contains(r.stderr, "--force") ||
		!strings.Contains(r.stderr, "move them aside and run ckpt restore --no-backup HEAD") {
		t.Fatalf("clone into a filled directory: exit %d\n%s", r.code, r.stderr)
	}
	if got := b.read("a.txt"); got != "mine\n" {
		t.Fatalf("the clone changed a.txt to %q", got)
	}
	if err := os.Rename(filepath.Join(b.ws, "a.txt"), filepath.Join(t.TempDir(), "a.txt")); err != nil {
		t.Fatal(err)
	}
	b.ok("restore", "--no-backup", "HEAD")
	if got := b.read("a.txt"); got != "remote\n" {
		t.Fatalf("after restore --no-backup HEAD: a.txt %q", got)
	}
	if list := decode[protocol.LogJSON](t, b.ok("list", "--json")); len(list.Checkpoints) != 1 {
		t.Fatalf("the clone's task after the advice: %d checkpoints, want the remote's one", len(list.Checkpoints))
	}
}

// pushedWorkspace is a workspace whose a.txt holds content, saved and
// pushed to a new file remote (origin) at url, in directory dir.
func pushedWorkspace(t *testing.T, content string) (a *env, url, dir string) {
	t.Helper()
	dir = t.TempDir()
	url = remote.FileURL(dir)
	a = newEnv(t)
	a.write("a.txt", content)
	a.ok("save")
	a.ok("remote", "add", "origin", url)
	a.ok("push")
	return a, url, dir
}

// A push to a remote that was emptied (or restored from an older copy)
// since this store last pushed is refused as the remote's damage, and the
// message says how to go on, not to verify this store, which is sound.
func TestCLIPushToAnEmptiedRemoteSaysHowToGoOn(t *testing.T) {
	t.Parallel()
	a, _, dir := pushedWorkspace(t, "one\n")
	if err := errors.Join(os.RemoveAll(dir), os.Mkdir(dir, 0o755)); err != nil {
		t.Fatal(err)
	}
	a.write("a.txt", "two\n")
	a.ok("save")
	r := a.run("", "push")
	if r.code != protocol.ExitCorrupted || !strings.Contains(r.stderr, "rolled back") || !strings.Contains(r.stderr, "remove it (`ckpt remote remove`) and add it again") ||
		strings.Contains(r.stderr, "ckpt verify") {
		t.Fatalf("push to an emptied remote: exit %d %q", r.code, r.stderr)
	}
	a.ok("verify")
}
