//go:build unix

package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/engine/remote"
	"github.com/ckpt/ckpt/internal/testbound"
)

// A server started with --push pushes after each save made through it,
// and `tasks --json` shows the push's state.
func TestListeningServerPushesAfterEverySave(t *testing.T) {
	testAutoPush(t)
}

// The same through an encrypted remote.
func TestListeningServerPushesToAnEncryptedRemote(t *testing.T) {
	key := filepath.Join(t.TempDir(), "remote.key")
	newEnv(t).ok("remote", "keygen", key)
	testAutoPush(t, "--key-file", key)
}

// testAutoPush runs a --push server on a remote added with keyFlags, and
// clones what it pushed with them.
func testAutoPush(t *testing.T, keyFlags ...string) {
	e := newEnv(t)
	e.write("a.txt", "one\n")
	dir := t.TempDir()
	url := remote.FileURL(dir)
	e.ok("save")
	e.ok(append([]string{"remote", "add", "origin", url}, keyFlags...)...)
	e.listenServer("--push", "origin")
	e.write("a.txt", "two\n")
	saved := decode[protocol.SaveJSON](t, e.ok("--lock-timeout", "0", "save", "--json"))
	deadline := time.Now().Add(testbound.Hang)
	for {
		got := decode[protocol.TasksAutoJSON](t, e.ok("--lock-timeout", "0", "tasks", "--json"))
		if got.AutoPush == nil {
			t.Fatalf("tasks --json through a --push server has no auto_push: %+v", got)
		}
		if got.AutoPush.LastPush != nil && len(got.AutoPush.Pending) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("automatic push stuck at %+v", got.AutoPush)
		}
		time.Sleep(20 * time.Millisecond)
	}
	c := newEnv(t)
	clone := decode[protocol.CloneJSON](t, c.ok(append([]string{"clone", url, "--json"}, keyFlags...)...))
	if clone.Head != saved.ID || clone.Checkpoints != 2 {
		t.Fatalf("clone of what the server pushed: %+v, saved %s", clone, saved.ID)
	}
	if r := e.run("", "serve", "--push", "origin"); r.code != protocol.ExitUsage {
		t.Fatalf("serve --push without --listen: exit %d", r.code)
	}
}

// A server runs remote keygen and remote add --key-file for a client with
// relative paths taken from the client's working directory, not its own.
func TestAServerTakesKeyFilePathsRelativeToTheClient(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "one\n")
	e.ok("save")
	e.listenServer()
	cwd := t.TempDir()
	t.Chdir(cwd)
	e.ok("--lock-timeout", "0", "remote", "keygen", "rel.key")
	e.ok("--lock-timeout", "0", "remote", "add", "origin", remote.FileURL(t.TempDir()), "--key-file", "rel.key")
	got := decode[protocol.RemotesJSON](t, e.ok("--lock-timeout", "0", "remote", "list", "--json"))
	want := filepath.Join(cwd, "rel.key")
	if len(got.Remotes) != 1 || got.Remotes[0].KeyFile != want {
		t.Fatalf("remote list: %+v, want key file %s", got, want)
	}
	e.ok("--lock-timeout", "0", "push")
}
