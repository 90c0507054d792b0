package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/cmd/ckpt/protocol/protocoltest"
	"github.com/ckpt/ckpt/internal/localsock"
	"github.com/ckpt/ckpt/internal/testbound"
)

// rpcClient is a JSON-RPC client of the store's server, keeping the
// notifications it reads.
type rpcClient struct {
	*protocoltest.Client
	events []protocoltest.Message
}

func (e *env) dialRPC() *rpcClient {
	e.t.Helper()
	conn, err := localsock.Dial(e.store)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { conn.Close() })
	// The whole conversation, however slow a loaded machine under -race
	// makes it, but not for ever.
	conn.SetDeadline(time.Now().Add(testbound.Hang))
	return &rpcClient{Client: protocoltest.NewClient(e.t, conn, conn)}
}

// call sends a request and returns its reply, keeping the notifications.
func (c *rpcClient) call(method string, params any) protocoltest.Message {
	reply, events := c.Call(method, params)
	c.events = append(c.events, events...)
	return reply
}

// eventTasks lists the method and task of each event kept.
func (c *rpcClient) eventTasks() []string {
	var out []string
	for _, m := range c.events {
		var p struct{ Task string }
		json.Unmarshal(m.Params, &p)
		out = append(out, m.Method+" "+p.Task)
	}
	return out
}

// The listening server speaks JSON-RPC on its endpoint beside forwarded
// commands: clients attach with a task, and each gets the events of its
// tasks, whoever caused them.
func TestResidentServerSpeaksJSONRPCToManyClients(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "one\n")
	e.listenServer()
	one, two, other := e.dialRPC(), e.dialRPC(), e.dialRPC()
	for c, task := range map[*rpcClient]string{one: "t1", two: "t1", other: "t2"} {
		if r := c.call("attach", map[string]string{"workspace": e.ws, "task": task}); r.Error != nil {
			t.Fatalf("attach %s: %s", task, r.Error.Message)
		}
	}
	saved := one.call("save", map[string]any{"message": "one"}) // the attached task is the default
	var res struct{ Task, ID string }
	if json.Unmarshal(saved.Result, &res); saved.Error != nil || res.Task != "t1" {
		t.Fatalf("save = %s %+v", saved.Result, saved.Error)
	}
	if out := e.ok("--lock-timeout", "0", "--task", "t1", "list"); !strings.Contains(out, "one") {
		t.Fatalf("a forwarded list beside the JSON-RPC clients = %q", out)
	}
	// Events reach the clients of t1 only (read with a request after them).
	two.call("list", map[string]any{})
	other.call("list", map[string]any{})
	if got := strings.Join(two.eventTasks(), ","); got != "initialize t1,checkpoint t1" {
		t.Fatalf("the other client of t1 got %q", got)
	}
	if got := other.eventTasks(); len(got) != 0 {
		t.Fatalf("the client of t2 got %q", got)
	}
	// A client becomes one of the tasks it saves.
	other.call("save", map[string]any{"task": "t3", "allow_empty": true})
	if got := strings.Join(other.eventTasks(), ","); got != "initialize t3,checkpoint t3" {
		t.Fatalf("the saver of t3 got %q", got)
	}

	// A client that needs other capture options is served under them: its
	// saves and restores capture what its rules do, beside the clients of
	// the server's own (two hosts' extensions on one workspace).
	e.write("secrets/key", "k\n")
	e.write("big.bin", strings.Repeat("b", 2<<10))
	roo := e.dialRPC()
	if r := roo.call("attach", map[string]any{"workspace": e.ws, "task": "roo", "profile": "roo", "exclude": []string{"secrets/"}, "max_file_size": 1 << 10}); r.Error != nil {
		t.Fatalf("attach with other capture options: %+v", r.Error)
	}
	if r := roo.call("save", map[string]any{"message": "roo"}); r.Error != nil {
		t.Fatalf("save under other options: %+v", r.Error)
	}
	if out := e.ok("--lock-timeout", "0", "--task", "roo", "ls", "@1"); strings.Contains(out, "secrets") || strings.Contains(out, "big.bin") || !strings.Contains(out, "a.txt") {
		t.Fatalf("the other options' checkpoint lists %q; want a.txt without secrets/ and big.bin", out)
	}
	if r := one.call("save", map[string]any{"message": "own"}); r.Error != nil {
		t.Fatal(r.Error)
	}
	if out := e.ok("--lock-timeout", "0", "--task", "t1", "ls", "@2"); !strings.Contains(out, "secrets") || !strings.Contains(out, "big.bin") {
		t.Fatalf("the server's own options' checkpoint lists %q; want secrets and big.bin", out)
	}
	for name, params := range map[string]map[string]any{
		"profile":       {"profile": "nosuch"},
		"max file size": {"max_file_size": -5},
	} {
		if r := e.dialRPC().call("attach", params); r.Error == nil || r.Error.Data.Kind != "usage" {
			t.Fatalf("attach with a meaningless %s = %+v", name, r.Error)
		}
	}
	elsewhere := e.dialRPC().call("attach", map[string]string{"workspace": t.TempDir()})
	if elsewhere.Error == nil || elsewhere.Error.Data.ExitCode != 4 {
		t.Fatalf("attach with another workspace = %+v", elsewhere.Error)
	}
}

// A second `serve --listen` of a store finds the first and says where it
// listens instead of waiting for the lock, so racing starters end on one.
func TestSecondListeningServerPointsAtTheFirst(t *testing.T) {
	e := newEnv(t)
	e.listenServer()
	got := decode[struct{ Listening, Store string }](t, e.ok("--lock-timeout", "0", "--json", "serve", "--listen"))
	if got.Listening != localsock.Endpoint(e.store) || got.Store != e.store {
		t.Fatalf("second server said %+v", got)
	}
	// One of another workspace, or with capture options that mean
	// nothing, fails as a client of the first would; one with other
	// options points at it too (its clients are served under theirs).
	other := *e
	other.ws = t.TempDir()
	if r := other.run("", "--lock-timeout", "0", "serve", "--listen"); r.code != protocol.ExitRefused {
		t.Fatalf("serve --listen of another workspace on the store: exit %d %q", r.code, r.stderr)
	}
	if r := e.run("", "--lock-timeout", "0", "--profile", "nosuch", "serve", "--listen"); r.code != protocol.ExitUsage || !strings.Contains(r.stderr, "nosuch") {
		t.Fatalf("serve --listen with an unknown --profile: exit %d %q", r.code, r.stderr)
	}
	got = decode[struct{ Listening, Store string }](t, e.ok("--lock-timeout", "0", "--exclude", "secrets/", "--json", "serve", "--listen"))
	if got.Listening != localsock.Endpoint(e.store) {
		t.Fatalf("second server with another --exclude said %+v", got)
	}
}

// A store held by a process that serves no client (a plain command) has
// nothing to attach to: serve --listen, stdio serve and mcp alike fail
// busy, naming the holder, once --lock-timeout has passed.
func TestServersOnAStoreAPlainCommandHoldsAreBusy(t *testing.T) {
	e := newEnv(t)
	e.holdLock()
	want := fmt.Sprintf("pid %d (%s)", os.Getpid(), lockHolder)
	for _, args := range [][]string{{"serve", "--listen"}, {"serve"}, {"mcp"}} {
		r := e.run("", append([]string{"--lock-timeout", "300ms"}, args...)...)
		if r.code != protocol.ExitBusy || !strings.Contains(r.stderr, want) {
			t.Errorf("%v on a locked store: exit %d %q, want %d naming %q", args, r.code, r.stderr, protocol.ExitBusy, want)
		}
	}
}

// While the store's server runs, a stdio serve attaches to it: its
// requests and events go through the server, with its --task.
func TestStdioServeAttachesToTheListeningServer(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "one\n")
	e.listenServer()
	in := `{"jsonrpc":"2.0","id":1,"method":"save","params":{"message":"relayed"}}` + "\n"
	r := e.run(in, "--lock-timeout", "0", "--task", "host", "serve")
	if r.code != 0 || !strings.Contains(r.stdout, `"method":"checkpoint"`) || !strings.Contains(r.stdout, `"task":"host"`) {
		t.Fatalf("serve through the server: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if out := e.ok("--lock-timeout", "0", "--task", "host", "list"); !strings.Contains(out, "relayed") {
		t.Fatalf("list after the relayed save = %q", out)
	}
	// One with other capture options is served under them.
	e.write("b.x", "x\n")
	in = `{"jsonrpc":"2.0","id":1,"method":"save","params":{"message":"other rules"}}` + "\n"
	if r := e.run(in, "--lock-timeout", "0", "--task", "rules", "--exclude", "*.x", "serve"); r.code != 0 || !strings.Contains(r.stdout, `"method":"checkpoint"`) {
		t.Fatalf("serve with another --exclude through the server: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if out := e.ok("--lock-timeout", "0", "--task", "rules", "ls", "@1"); strings.Contains(out, "b.x") || !strings.Contains(out, "a.txt") {
		t.Fatalf("the relayed save under --exclude *.x lists %q", out)
	}
}
