package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/cmd/ckpt/protocol/protocoltest"
	"github.com/ckpt/ckpt/internal/blindspot"
	"github.com/ckpt/ckpt/internal/testbound"
)

// missedEnv is a workspace whose servers re-verify every few milliseconds
// (testreverify_ckpttest.go), so a change their watcher misses is found
// at once rather than minutes later.
func missedEnv(t *testing.T) *env {
	e := newEnv(t)
	e.write("a/b/f", "one two three")
	e.write("c.txt", "sea\n")
	e.serverEnv = append(e.serverEnv, "CKPT_TEST_REVERIFY_INTERVAL=20ms")
	return e
}

// missChange rewrites a/b/f through a shared mapping it keeps until the
// test ends: no event reports it, only a re-verification finds it.
func (e *env) missChange() {
	e.t.Helper()
	m, err := blindspot.MmapRewrite(filepath.Join(e.ws, "a", "b", "f"), []byte("ONE"), true)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { unix.Munmap(m) })
}

// awaitMissed reads c's messages until a missedChanges notification and
// returns its params. The caller bounds the wait (a deadline on the
// connection, or a watchdog ending the server).
func awaitMissed(t *testing.T, c *protocoltest.Client) protocol.MissedChangesEvent {
	t.Helper()
	for {
		m := c.Next()
		if m.Method != "missedChanges" {
			continue
		}
		var ev protocol.MissedChangesEvent
		if err := json.Unmarshal(m.Params, &ev); err != nil {
			t.Fatalf("missedChanges %s: %v", m.Params, err)
		}
		return ev
	}
}

// checkMissed fails unless ev names a/b, the directory of the change.
func checkMissed(t *testing.T, who string, ev protocol.MissedChangesEvent) {
	t.Helper()
	if !slices.Equal(ev.Paths, []string{"a/b"}) || ev.PathsBase64 != nil {
		t.Fatalf("%s got missedChanges %+v, want the paths [a/b]", who, ev)
	}
}

// checkWatcherStats fails unless st counts the missed change.
func checkWatcherStats(t *testing.T, who string, st protocol.StoreStatsJSON) {
	t.Helper()
	if w := st.Watcher; w == nil || w.Backend != "inotify" || w.Missed < 1 || w.Reverified < 1 {
		t.Fatalf("%s: stats watcher %+v, want inotify with a missed change found", who, w)
	}
}

// A change the watcher of a listening server misses (a write through a
// shared mapping) is found by its re-verification and reported to every
// JSON-RPC client, attached with a task or not, and `ckpt stats` through
// the server counts it, as text and as JSON.
func TestListeningServerReportsMissedChangesToEveryClient(t *testing.T) {
	e := missedEnv(t)
	e.listenServer()
	attached, plain := e.dialRPC(), e.dialRPC()
	if r := attached.call("attach", map[string]string{"workspace": e.ws, "task": "elsewhere"}); r.Error != nil {
		t.Fatalf("attach: %s", r.Error.Message)
	}
	if r := plain.call("save", map[string]any{"message": "before"}); r.Error != nil {
		t.Fatalf("save: %s", r.Error.Message)
	}
	before := decode[protocol.StoreStatsJSON](t, e.ok("--lock-timeout", "0", "--json", "stats"))
	if w := before.Watcher; w == nil || w.Missed != 0 {
		t.Fatalf("stats through the server before the change: watcher %+v, want one with nothing missed", w)
	}
	e.missChange()
	checkMissed(t, "the attached client", awaitMissed(t, attached.Client))
	checkMissed(t, "the plain client", awaitMissed(t, plain.Client))
	checkWatcherStats(t, "stats --json through the server", decode[protocol.StoreStatsJSON](t, e.ok("--lock-timeout", "0", "--json", "stats")))
	var st protocol.StoreStatsJSON
	plain.OK("stats", map[string]any{}, &st)
	checkWatcherStats(t, "the stats method", st)
	if out := e.ok("--lock-timeout", "0", "stats"); !strings.Contains(out, "re-verifications found 1 missed changes") {
		t.Fatalf("stats through the server says:\n%s", out)
	}
	saved := decode[protocol.SaveJSON](t, e.ok("--lock-timeout", "0", "save", "--json"))
	if !saved.Created {
		t.Fatalf("the save after the re-verification captured nothing: %+v", saved)
	}
	if got := e.ok("--lock-timeout", "0", "cat", "HEAD", "a/b/f"); got != "ONE two three" {
		t.Fatalf("a/b/f saved as %q", got)
	}
}

// Stdio serve sends missedChanges to its host, and its stats count it;
// without a server, `ckpt stats --json` has no watcher.
func TestStdioServeReportsMissedChanges(t *testing.T) {
	e := missedEnv(t)
	if st := decode[protocol.StoreStatsJSON](t, e.ok("--json", "stats")); st.Watcher != nil {
		t.Fatalf("cold stats --json has a watcher: %+v", st.Watcher)
	}
	cmd, s, end := e.stdioServe()
	s.OK("save", map[string]any{}, nil)
	e.missChange()
	watchdog := time.AfterFunc(testbound.Hang, func() { cmd.Process.Kill() }) // ends the wait below with a failure
	checkMissed(t, "the host", awaitMissed(t, s))
	watchdog.Stop()
	var st protocol.StoreStatsJSON
	s.OK("stats", map[string]any{}, &st)
	checkWatcherStats(t, "stdio serve's stats", st)
	end()
}

// `ckpt mcp` sends missedChanges as a log message of the logger "ckpt",
// and ckpt_stats counts it.
func TestMCPReportsMissedChanges(t *testing.T) {
	e := missedEnv(t)
	logged := make(chan json.RawMessage, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			b, _ := json.Marshal(r.Params.Data)
			var msg struct {
				Event  string          `json:"event"`
				Params json.RawMessage `json:"params"`
			}
			if json.Unmarshal(b, &msg) == nil && r.Params.Logger == "ckpt" && msg.Event == "missedChanges" {
				logged <- msg.Params
			}
		}})
	ctx := context.Background()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: e.serverCommand("mcp")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	call := func(tool string, out any) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", tool, err, res)
		}
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s result %s: %v", tool, b, err)
		}
	}
	var saved protocol.SaveJSON
	call("ckpt_save", &saved)
	e.missChange()
	select {
	case raw := <-logged:
		var ev protocol.MissedChangesEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			t.Fatal(err)
		}
		checkMissed(t, "the MCP client", ev)
	case <-time.After(testbound.Hang):
		t.Fatalf("no missedChanges log message within %v", testbound.Hang)
	}
	var st protocol.StoreStatsJSON
	call("ckpt_stats", &st)
	checkWatcherStats(t, "ckpt_stats", st)
}
