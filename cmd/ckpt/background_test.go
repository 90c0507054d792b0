package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestBackgroundRecompressExitsWhenTheStoreIsGone runs the hidden
// background command for a store that does not exist (removed since the
// save that started it): it exits successfully at once and creates
// nothing.
func TestBackgroundRecompressExitsWhenTheStoreIsGone(t *testing.T) {
	e := newEnv(t)
	e.ok(backgroundCommand)
	if _, err := os.Stat(e.store); !os.IsNotExist(err) {
		t.Fatalf("the background command created the store: %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(e.store)); len(ents) != 0 {
		t.Fatalf("the background command left %d entries beside the store", len(ents))
	}
}

// TestBackgroundRecompressStopsForAServer runs the hidden background
// command, with an hour's --lock-timeout, while a listening server holds
// the store (and its lock): it leaves the store to the server, which
// recompresses while idle, and exits successfully instead of waiting.
func TestBackgroundRecompressStopsForAServer(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "text\n")
	e.ok("save")
	e.listenServer()
	if r := e.run("", "--lock-timeout", "1h", backgroundCommand); r.code != 0 {
		t.Fatalf("background command with a server: exit %d\n%s", r.code, r.stderr)
	}
}
