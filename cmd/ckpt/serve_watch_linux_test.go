package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// inotifyWatches counts the inotify watches process pid holds, from
// /proc/<pid>/fdinfo: one line "inotify wd:..." per watch.
func inotifyWatches(t *testing.T, pid int) int {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join(dir, fd.Name())); err != nil || target != "anon_inode:inotify" {
			continue
		}
		info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, fd.Name()))
		if err != nil {
			t.Fatal(err)
		}
		n += strings.Count(string(info), "inotify wd:")
	}
	return n
}

// checkWatchedSaves saves e's workspace through save, edits a file two
// directories down, saves again, then once more unchanged: the edit must be
// seen and the last save create nothing. The server (process pid) must
// hold a watch for each of the four captured directories when watched and
// none when not.
func checkWatchedSaves(t *testing.T, e *env, pid int, watched bool, save func() protocol.SaveJSON) {
	t.Helper()
	first := save()
	if !first.Created || first.Stats.Files != 4 {
		t.Fatalf("first save = %+v", first)
	}
	if n := inotifyWatches(t, pid); watched && n < 4 || !watched && n != 0 {
		t.Fatalf("the server holds %d inotify watches after a save of 4 directories (watched: %v)", n, watched)
	}
	e.write("src/deep/c.txt", "sea, edited\n")
	second := save()
	if !second.Created || second.Parent != first.ID || second.Stats.Modified != 1 {
		t.Fatalf("save after an edit = %+v; want a checkpoint with one file modified", second)
	}
	if third := save(); third.Created || third.ID != second.ID {
		t.Fatalf("save with nothing changed = %+v; want none created and the head %s", third, second.ID)
	}
}

// watchedTree makes a workspace of four directories.
func watchedTree(t *testing.T) *env {
	e := newEnv(t)
	e.write("a.txt", "one\n")
	e.write("src/b.txt", "bee\n")
	e.write("src/deep/c.txt", "sea\n")
	e.write("docs/d.md", "# d\n")
	return e
}

// Stdio serve opens the engine with the change watcher unless
// --watch=false, and a save through it sees every edit either way.
func TestServeStdioWatchesTheWorkspace(t *testing.T) {
	for _, watched := range []bool{true, false} {
		t.Run(fmt.Sprintf("watch=%v", watched), func(t *testing.T) {
			e := watchedTree(t)
			var flags []string
			if !watched {
				flags = append(flags, "--watch=false")
			}
			cmd, s, _ := e.stdioServe(flags...)
			checkWatchedSaves(t, e, cmd.Process.Pid, watched, func() protocol.SaveJSON {
				var res protocol.SaveJSON
				s.OK("save", map[string]any{}, &res)
				return res
			})
		})
	}
}

// `ckpt mcp` opens the engine with the change watcher unless --watch=false.
func TestMCPWatchesTheWorkspace(t *testing.T) {
	for _, watched := range []bool{true, false} {
		t.Run(fmt.Sprintf("watch=%v", watched), func(t *testing.T) {
			e := watchedTree(t)
			cmd := e.serverCommand("mcp", fmt.Sprintf("--watch=%v", watched))
			client := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, nil)
			cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := cs.Close(); err != nil {
					t.Errorf("close: %v", err)
				}
			})
			checkWatchedSaves(t, e, cmd.Process.Pid, watched, func() protocol.SaveJSON {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ckpt_save", Arguments: map[string]any{}})
				if err != nil || res.IsError {
					t.Fatalf("save: %v %+v", err, res)
				}
				b, _ := json.Marshal(res.StructuredContent)
				var out protocol.SaveJSON
				if err := json.Unmarshal(b, &out); err != nil {
					t.Fatalf("save result %s: %v", b, err)
				}
				return out
			})
		})
	}
}

// serve --listen keeps the watcher too, and --watch=false turns it off.
func TestServeListenWatchFlag(t *testing.T) {
	for _, watched := range []bool{true, false} {
		t.Run(fmt.Sprintf("watch=%v", watched), func(t *testing.T) {
			e := watchedTree(t)
			srv := e.listenServer(fmt.Sprintf("--watch=%v", watched))
			checkWatchedSaves(t, e, srv.Process.Pid, watched, func() protocol.SaveJSON {
				return decode[protocol.SaveJSON](t, e.ok("--lock-timeout", "0", "save", "--json"))
			})
		})
	}
}
