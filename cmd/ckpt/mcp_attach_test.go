package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ckpt/ckpt/internal/testbound"
)

// mcpHost is an MCP client session with `ckpt mcp`, keeping the events
// (log messages) and progress it gets.
type mcpHost struct {
	cs       *mcp.ClientSession
	mu       sync.Mutex
	events   []string // "method task"
	progress int
}

// mcpClient starts `ckpt mcp` with flags and connects to it.
func (e *env) mcpClient(flags ...string) *mcpHost {
	e.t.Helper()
	cmd := exec.Command(ckptBin, append([]string{"-C", e.ws, "--store", e.store}, append(flags, "mcp")...)...)
	cmd.Env = append(os.Environ(), "HOME="+e.home, "USERPROFILE="+e.home, "CKPT_TASK=")
	h := &mcpHost{}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
			h.mu.Lock()
			h.progress++
			h.mu.Unlock()
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			var ev struct {
				Event  string
				Params struct{ Task string }
			}
			b, _ := json.Marshal(r.Params.Data)
			json.Unmarshal(b, &ev)
			h.mu.Lock()
			h.events = append(h.events, ev.Event+" "+ev.Params.Task)
			h.mu.Unlock()
		},
	})
	var err error
	if h.cs, err = client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { h.cs.Close() })
	if err := h.cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		e.t.Fatal(err)
	}
	return h
}

// call calls a tool and returns its structured content as JSON.
func (h *mcpHost) call(t *testing.T, params *mcp.CallToolParams) (string, bool) {
	t.Helper()
	res, err := h.cs.CallTool(context.Background(), params)
	if err != nil {
		t.Fatalf("%s: %v", params.Name, err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	return string(b), res.IsError
}

func (h *mcpHost) has(event string) bool { return h.count(event) > 0 }

// count is how many of the events kept are event ("method task").
func (h *mcpHost) count(event string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, ev := range h.events {
		if ev == event {
			n++
		}
	}
	return n
}

// While the store's server runs, ckpt mcp attaches to it instead of taking
// the lock (--lock-timeout 0 would fail busy): its tools run on the
// server's engine beside the CLI and a JSON-RPC client, with their
// progress, errors and the events of its task; when the server stops, mcp
// ends.
func TestMCPAttachesToTheListeningServer(t *testing.T) {
	e := newEnv(t)
	for i := range 300 { // enough for verify to report progress
		e.write(fmt.Sprintf("f%d.txt", i), fmt.Sprint(i))
	}
	srv := e.listenServer()
	rpc := e.dialRPC()
	if r := rpc.call("attach", map[string]string{"workspace": e.ws, "task": "agent"}); r.Error != nil {
		t.Fatal(r.Error.Message)
	}
	h := e.mcpClient("--lock-timeout", "0", "--task", "agent")

	saved, failed := h.call(t, &mcp.CallToolParams{Name: "ckpt_save", Arguments: map[string]any{"message": "by mcp"}})
	var res struct {
		Created bool
		Task    string
	}
	if json.Unmarshal([]byte(saved), &res); failed || !res.Created || res.Task != "agent" {
		t.Fatalf("save through mcp = %s", saved)
	}
	if out := e.ok("--lock-timeout", "0", "--task", "agent", "list"); !strings.Contains(out, "by mcp") {
		t.Fatalf("the CLI's list beside mcp = %q", out)
	}
	rpc.call("save", map[string]any{"message": "by rpc", "allow_empty": true})
	// Each connection begins the task with its own initialize.
	if got := strings.Join(rpc.eventTasks(), ","); got != "initialize agent,checkpoint agent,initialize agent,checkpoint agent" {
		t.Fatalf("the JSON-RPC client of the task got %q", got)
	}
	testbound.Until(t, "the JSON-RPC client's checkpoint reaches mcp", func() bool { return h.has("checkpoint agent") })

	verify := &mcp.CallToolParams{Name: "ckpt_verify", Arguments: map[string]any{}}
	verify.SetProgressToken("v")
	if out, failed := h.call(t, verify); failed {
		t.Fatalf("verify through mcp = %s", out)
	}
	testbound.Until(t, "verify's progress", func() bool { h.mu.Lock(); defer h.mu.Unlock(); return h.progress > 0 })
	out, failed := h.call(t, &mcp.CallToolParams{Name: "ckpt_show", Arguments: map[string]any{"ref": "ffffffff"}})
	var errJSON struct {
		Error struct {
			Data struct {
				ExitCode int `json:"exit_code"`
				Kind     string
			}
		}
	}
	if json.Unmarshal([]byte(out), &errJSON); !failed || errJSON.Error.Data.Kind != "unknown_ref" || errJSON.Error.Data.ExitCode != 2 {
		t.Fatalf("show of an unknown ref through mcp = %s", out)
	}

	srv.Process.Kill()
	srv.Wait()
	ended := make(chan error, 1)
	go func() { ended <- h.cs.Wait() }()
	testbound.Within(t, testbound.Hang, func() { <-ended })
}
