//go:build unix

package main

import (
	"path/filepath"
	"testing"
	"time"
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
	url := fileURL(dir)
	e.ok("save")
	e.ok(append([]string{"remote", "add", "origin", url}, keyFlags...)...)
	e.listenServer("--push", "origin")
	e.write("a.txt", "two\n")
	saved := decode[saveJSON](t, e.ok("--lock-timeout", "0", "save", "--json"))
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := decode[tasksAutoJSON](t, e.ok("--lock-timeout", "0", "tasks", "--json"))
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
	clone := decode[cloneJSON](t, c.ok(append([]string{"clone", url, "--json"}, keyFlags...)...))
	if clone.Head != saved.ID || clone.Checkpoints != 2 {
		t.Fatalf("clone of what the server pushed: %+v, saved %s", clone, saved.ID)
	}
	if r := e.run("", "serve", "--push", "origin"); r.code != exitUsage {
		t.Fatalf("serve --push without --listen: exit %d", r.code)
	}
}
