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

	refused := e.dialRPC().call("attach", map[string]string{"workspace": e.ws, "profile": "roo"})
	if refused.Error == nil || refused.Error.Data.Kind != "usage" || !strings.Contains(refused.Error.Message, "profile default, not roo") {
		t.Fatalf("attach with another profile = %+v", refused.Error)
	}
	for name, params := range map[string]map[string]any{
		"exclude":       {"exclude": []string{"secrets/"}},
		"max file size": {"max_file_size": 1 << 20},
	} {
		if r := e.dialRPC().call("attach", params); r.Error == nil || r.Error.Data.Kind != "usage" || !strings.Contains(r.Error.Message, "use its options") {
			t.Fatalf("attach with another %s = %+v", name, r.Error)
		}
	}
	if same := e.dialRPC().call("attach", map[string]any{"max_file_size": 100 << 20}); same.Error != nil {
		t.Fatalf("attach with the server's own max file size: %+v", same.Error)
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
	// One of another workspace, or that would capture otherwise, fails as
	// a client of the first would.
	other := *e
	other.ws = t.TempDir()
	if r := other.run("", "--lock-timeout", "0", "serve", "--listen"); r.code != protocol.ExitRefused {
		t.Fatalf("serve --listen of another workspace on the store: exit %d %q", r.code, r.stderr)
	}
	if r := e.run("", "--lock-timeout", "0", "--exclude", "secrets/", "serve", "--listen"); r.code != protocol.ExitUsage || !strings.Contains(r.stderr, "use its options") {
		t.Fatalf("serve --listen with another --exclude: exit %d %q", r.code, r.stderr)
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
	if r := e.run("", "--profile", "roo", "serve"); r.code != 2 || !strings.Contains(r.stderr, "--profile default, not roo") {
		t.Fatalf("serve with another profile: exit %d %q", r.code, r.stderr)
	}
	if r := e.run("", "--max-file-size", "1MiB", "mcp"); r.code != 2 || !strings.Contains(r.stderr, "--max-file-size 104857600, not 1048576") {
		t.Fatalf("mcp with another --max-file-size: exit %d %q", r.code, r.stderr)
	}
}
