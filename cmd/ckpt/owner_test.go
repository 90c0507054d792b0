package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ckpt/ckpt/internal/localsock"
	"github.com/ckpt/ckpt/internal/testbound"
)

// messagesOf lists the messages of a list result, oldest first.
func messagesOf(t *testing.T, list json.RawMessage) string {
	t.Helper()
	var log struct{ Checkpoints []struct{ Message string } }
	if err := json.Unmarshal(list, &log); err != nil {
		t.Fatalf("list result %s: %v", list, err)
	}
	var out []string
	for _, c := range log.Checkpoints {
		out = append(out, c.Message)
	}
	return strings.Join(out, ",")
}

// stdioSave is the line of a JSON-RPC save request with the message.
func stdioSave(message string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"save","params":{"allow_empty":true,"message":"` + message + `"}}` + "\n"
}

// endpointGone waits until the store's endpoint is removed.
func (e *env) endpointGone() {
	e.t.Helper()
	testbound.Until(e.t, "the endpoint is removed", func() bool {
		_, err := os.Lstat(localsock.Endpoint(e.store))
		return os.IsNotExist(err)
	})
}

// A stdio serve that finds no server becomes the store's: while it runs, a
// CLI command, a second stdio serve and a JSON-RPC client work on the
// store (--lock-timeout 0: one that waited for the lock would fail busy)
// and all see one history, and the events of a task reach every client of
// it. When its host closes stdin, the endpoint goes, the clients still
// attached are let go and the store is free.
func TestStdioServeOwnsTheStoreForLaterClients(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "one\n")
	_, owner, end := e.stdioServe("--lock-timeout", "0", "--task", "t1")
	owner.OK("save", map[string]any{"message": "by owner"}, nil)
	if _, err := os.Lstat(localsock.Endpoint(e.store)); err != nil {
		t.Fatalf("no endpoint while a stdio serve owns the store: %v", err)
	}

	e.ok("--lock-timeout", "0", "--task", "t1", "save", "--allow-empty", "-m", "by cli")
	second := e.run(stdioSave("by second serve"), "--lock-timeout", "0", "--task", "t1", "serve")
	if second.code != 0 || !strings.Contains(second.stdout, `"created":true`) {
		t.Fatalf("a second stdio serve beside the owner: exit %d\n%s%s", second.code, second.stdout, second.stderr)
	}
	rpc := e.dialRPC()
	if r := rpc.call("attach", map[string]string{"workspace": e.ws, "task": "t1"}); r.Error != nil {
		t.Fatalf("attach: %s", r.Error.Message)
	}
	if r := rpc.call("save", map[string]any{"allow_empty": true, "message": "by rpc"}); r.Error != nil {
		t.Fatalf("save of a JSON-RPC client: %s", r.Error.Message)
	}

	const want = "by owner,by cli,by second serve,by rpc"
	if out := e.ok("--lock-timeout", "0", "--task", "t1", "list"); strings.Count(out, "by ") != 4 {
		t.Fatalf("the CLI's list beside the owner = %q, want %s", out, want)
	}
	list, events := owner.Call("list", map[string]any{})
	if got := messagesOf(t, list.Result); got != want {
		t.Fatalf("the owner lists %q, want %q", got, want)
	}
	checkpoints := 0 // the forwarded CLI save sends none, as through serve --listen
	for _, ev := range events {
		if ev.Method == "checkpoint" {
			checkpoints++
		}
	}
	if checkpoints != 2 {
		t.Fatalf("the owner got %d checkpoint events of the other clients' saves of its task, want 2", checkpoints)
	}

	end()
	e.endpointGone()
	testbound.Within(t, testbound.Hang, rpc.Drain) // the attached client's connection ends
	if out := e.ok("--lock-timeout", "0", "--task", "t1", "list"); strings.Count(out, "by ") != 4 {
		t.Fatalf("list once the owner is gone = %q", out)
	}
}

// ckpt mcp that finds no server becomes the store's as stdio serve does:
// the CLI, a stdio serve and a second mcp attach to it, their checkpoints
// reach its MCP client as events of its task, and when its client goes,
// the endpoint goes and the attached mcp ends.
func TestMCPOwnsTheStoreForLaterClients(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "one\n")
	owner := e.mcpClient("--lock-timeout", "0", "--task", "agent")
	if out, failed := owner.call(t, &mcp.CallToolParams{Name: "ckpt_save", Arguments: map[string]any{"message": "by mcp"}}); failed {
		t.Fatalf("the owner's save = %s", out)
	}

	e.ok("--lock-timeout", "0", "--task", "agent", "save", "--allow-empty", "-m", "by cli")
	if r := e.run(stdioSave("by serve"), "--lock-timeout", "0", "--task", "agent", "serve"); r.code != 0 {
		t.Fatalf("a stdio serve beside the mcp owner: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	other := e.mcpClient("--lock-timeout", "0", "--task", "agent")
	if out, failed := other.call(t, &mcp.CallToolParams{Name: "ckpt_save",
		Arguments: map[string]any{"message": "by second mcp", "allow_empty": true}}); failed {
		t.Fatalf("a second mcp's save = %s", out)
	}

	out, failed := owner.call(t, &mcp.CallToolParams{Name: "ckpt_list", Arguments: map[string]any{}})
	if got, want := messagesOf(t, json.RawMessage(out)), "by mcp,by cli,by serve,by second mcp"; failed || got != want {
		t.Fatalf("the owner lists %q, want %q", got, want)
	}
	testbound.Until(t, "the serve's and the second mcp's checkpoints reach the owner", func() bool {
		return owner.count("checkpoint agent") == 3
	})

	owner.cs.Close()
	e.endpointGone()
	testbound.Within(t, testbound.Hang, func() { other.cs.Wait() })
	if out := e.ok("--lock-timeout", "0", "--task", "agent", "list"); strings.Count(out, "by ") != 4 {
		t.Fatalf("list once the owner is gone = %q", out)
	}
}

// When the owner's host goes, what its other clients are running stops as
// when serve --listen stops: a forwarded command in progress and a relayed
// stdio serve each fail saying the server stopped.
func TestOwnersClientsAreToldWhenItStops(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "one\n")
	paused := e.pauseServersAt("save-scanned")
	_, owner, end := e.stdioServe("--lock-timeout", "0")
	owner.OK("list", map[string]any{}, nil)
	save, _, saveErr := e.start(strings.NewReader(""), "--lock-timeout", "0", "save")
	paused()

	var relayedErr bytes.Buffer
	relayed, in, client := e.startStdio(func() *exec.Cmd {
		cmd := e.serverCommand("--lock-timeout", "0", "serve")
		relayedErr.Reset()
		cmd.Stderr = &relayedErr
		return cmd
	})
	defer in.Close()
	client.OK("tasks", map[string]any{}, nil) // attached

	end()
	e.endpointGone()
	saveCode, _ := waitExit(t, save)
	relayedCode, _ := waitExit(t, relayed)
	for name, r := range map[string]result{
		"the forwarded save": {stderr: saveErr.String(), code: saveCode},
		"the relayed serve":  {stderr: relayedErr.String(), code: relayedCode},
	} {
		if r.code != 1 || !strings.Contains(r.stderr, "the server of store") || !strings.Contains(r.stderr, "stopped") {
			t.Errorf("%s when the owner stopped: exit %d %q, want 1 saying the server stopped", name, r.code, r.stderr)
		}
	}
}

// An owner that cannot create the store's endpoint (here a directory
// stands in its place) still serves its own host; other clients then wait
// for its lock, as they would for any command's, and a notice says so.
func TestOwnerThatCannotListenServesItsHostAlone(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "one\n")
	e.ok("save")
	if err := os.Mkdir(localsock.Endpoint(e.store), 0o700); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd, in, owner := e.startStdio(func() *exec.Cmd {
		cmd := e.serverCommand("--lock-timeout", "0", "serve")
		stderr.Reset()
		cmd.Stderr = &stderr
		return cmd
	})
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		if cmd.ProcessState == nil { // the test stopped before it waited
			in.Close()
			cmd.Wait()
		}
		t.Logf("the owner's stderr: %q", stderr.String())
	})
	owner.OK("save", map[string]any{"allow_empty": true, "message": "alone"}, nil)
	if r := e.run("", "--lock-timeout", "0", "list"); r.code != 3 || !strings.Contains(r.stderr, "(ckpt serve)") {
		t.Errorf("list while an owner without endpoint holds the store: exit %d %q, want 3 naming it", r.code, r.stderr)
	}
	in.Close()
	if err := cmd.Wait(); err != nil || !strings.Contains(stderr.String(), "other clients wait for its lock") {
		t.Errorf("the owner without endpoint: %v, stderr %q", err, stderr.String())
	}
}
