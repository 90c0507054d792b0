package protocol

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/testbound"
)

// mcpFixture is an MCP session of the SDK's own client with newMCPServer
// over in-memory transports, recording the notifications it gets.
type mcpFixture struct {
	ws       string
	cs       *mcp.ClientSession
	mu       sync.Mutex
	progress []*mcp.ProgressNotificationParams
	events   []string
	progCh   chan struct{}
	hold     atomic.Pointer[progressHold]
}

// progressHold makes the server's first progress notification of token
// wait, unsent, until the request it reports on is cancelled: the call
// cannot end before a cancellation reaches the server.
type progressHold struct {
	token    string
	reached  chan struct{} // closed when the notification is held
	released chan struct{} // closed when the request's context ended it
}

// holdingTransport is the server's transport with f.hold applied to what
// the server writes.
type holdingTransport struct {
	mcp.Transport
	f *mcpFixture
}

func (t holdingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	return holdingConn{c, t.f}, err
}

type holdingConn struct {
	mcp.Connection
	f *mcpFixture
}

// Write holds the notification f.hold names until ctx, the context of
// the request the notification reports on, is done.
func (c holdingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if h := c.f.hold.Load(); h != nil && isProgressOf(msg, h.token) && c.f.hold.CompareAndSwap(h, nil) {
		close(h.reached)
		<-ctx.Done()
		close(h.released)
		return ctx.Err()
	}
	return c.Connection.Write(ctx, msg)
}

// isProgressOf reports whether msg is a progress notification of token.
func isProgressOf(msg jsonrpc.Message, token string) bool {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.Method != "notifications/progress" {
		return false
	}
	var p struct{ ProgressToken any }
	return json.Unmarshal(req.Params, &p) == nil && p.ProgressToken == token
}

func newMCPFixture(t *testing.T) *mcpFixture {
	t.Helper()
	ctx := context.Background()
	f := &mcpFixture{ws: t.TempDir(), progCh: make(chan struct{}, 1)}
	scans := &ScanHub{}
	e, err := engine.Open(ctx, f.ws, engine.Options{StoreDir: filepath.Join(t.TempDir(), "store"), OnProgress: scans.Send})
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := NewMCPServer(e, Session{Task: engine.DefaultTask, Scans: scans}, "test").Connect(ctx, holdingTransport{st, f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			f.mu.Lock()
			f.progress = append(f.progress, r.Params)
			f.mu.Unlock()
			select {
			case f.progCh <- struct{}{}:
			default:
			}
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			var ev struct{ Event string }
			b, _ := json.Marshal(r.Params.Data)
			json.Unmarshal(b, &ev)
			f.mu.Lock()
			f.events = append(f.events, ev.Event)
			f.mu.Unlock()
		},
	})
	if f.cs, err = client.Connect(ctx, ct, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		f.cs.Close()
		ss.Wait()
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	})
	return f
}

func (f *mcpFixture) call(t *testing.T, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := f.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// outputSchemas resolves every listed tool's output schema, as clients that
// check structured content (the TypeScript SDK's) do.
func (f *mcpFixture) outputSchemas(t *testing.T) map[string]*jsonschema.Resolved {
	t.Helper()
	list, err := f.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*jsonschema.Resolved{}
	for _, tool := range list.Tools {
		b, err := json.Marshal(tool.OutputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		if out[tool.Name], err = s.Resolve(nil); err != nil {
			t.Fatalf("%s: output schema: %v", tool.Name, err)
		}
	}
	return out
}

// checkOutput fails unless a result's structured content, if any, matches
// the tool's output schema: a failed call's too.
func checkOutput(t *testing.T, schemas map[string]*jsonschema.Resolved, name string, res *mcp.CallToolResult) {
	t.Helper()
	if res.StructuredContent == nil {
		return
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if err := schemas[name].Validate(v); err != nil {
		t.Errorf("%s: structured content %s does not match the output schema: %v", name, b, err)
	}
}

func TestMCPToolsAnnotationsAndSchemas(t *testing.T) {
	f := newMCPFixture(t)
	if err := f.cs.Ping(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if init := f.cs.InitializeResult(); init.ServerInfo.Name != "ckpt" || init.Capabilities.Tools == nil {
		t.Fatalf("initialize = %+v", init)
	}
	list, err := f.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"ckpt_save": "write", "ckpt_list": "query", "ckpt_show": "query", "ckpt_ls": "query",
		"ckpt_cat": "query", "ckpt_diff": "query", "ckpt_restore": "destructive", "ckpt_tasks": "query",
		"ckpt_drop": "destructive", "ckpt_gc": "destructive", "ckpt_verify": "query", "ckpt_stats": "query",
		"ckpt_push": "write", "ckpt_pull": "write", "ckpt_log": "query", "ckpt_export": "write", "ckpt_bisect": "write"}
	if len(list.Tools) != len(want) {
		t.Fatalf("%d tools, want %d", len(list.Tools), len(want))
	}
	for _, tool := range list.Tools {
		ann := tool.Annotations
		got := "write"
		switch {
		case ann == nil:
			got = "none"
		case ann.ReadOnlyHint:
			got = "query"
		case ann.DestructiveHint != nil && *ann.DestructiveHint:
			got = "destructive"
		}
		if got != want[tool.Name] || tool.Title == "" || ann.Title == "" || tool.OutputSchema == nil || tool.InputSchema == nil {
			t.Errorf("tool %s: %s, title %q, output schema %v; want %s", tool.Name, got, tool.Title, tool.OutputSchema != nil, want[tool.Name])
		}
	}
}

// Every tool succeeds with valid arguments and returns structured output,
// fails as isError (or invalid params) with invalid ones, and events arrive
// as log messages.
func TestMCPEveryToolValidAndInvalid(t *testing.T) {
	f := newMCPFixture(t)
	if err := os.WriteFile(filepath.Join(f.ws, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	valid := []struct {
		name string
		args map[string]any
	}{
		{"ckpt_save", map[string]any{"message": "first", "state": "s1"}},
		{"ckpt_list", map[string]any{}},
		{"ckpt_show", map[string]any{"ref": "@1"}},
		{"ckpt_ls", map[string]any{"ref": "@1"}},
		{"ckpt_cat", map[string]any{"ref": "@1", "path": "a.txt"}},
		{"ckpt_diff", map[string]any{"from": "@1"}},
		{"ckpt_log", map[string]any{"paths": []string{"a.txt"}}},
		{"ckpt_export", map[string]any{"ref": "@1", "dir": filepath.Join(t.TempDir(), "export")}},
		{"ckpt_restore", map[string]any{"ref": "@1", "only": "both"}},
		{"ckpt_save", map[string]any{"message": "second", "allow_empty": true}},
		{"ckpt_bisect", map[string]any{"run": "exit 1", "good": "@1"}},
		{"ckpt_tasks", map[string]any{}},
		{"ckpt_verify", map[string]any{}},
		{"ckpt_stats", map[string]any{}},
		{"ckpt_drop", map[string]any{"task": "default"}},
		{"ckpt_gc", map[string]any{"keep_last": 3}},
	}
	schemas := f.outputSchemas(t)
	for _, c := range valid {
		res := f.call(t, c.name, c.args)
		if res.IsError || res.StructuredContent == nil || len(res.Content) == 0 {
			t.Errorf("%s %v = %+v", c.name, c.args, res)
		}
		checkOutput(t, schemas, c.name, res)
	}
	for _, c := range valid {
		args := map[string]any{"bogus": 1}
		res, err := f.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.name, Arguments: args})
		if err != nil || !res.IsError {
			t.Errorf("%s with an unknown argument: %+v, %v; want a failed call", c.name, res, err)
			continue
		}
		// The SDK refuses it before the tool runs; the result carries the
		// structured error of a usage mistake all the same.
		checkOutput(t, schemas, c.name, res)
		data, _ := json.Marshal(res.StructuredContent)
		var got struct {
			Error struct{ Data ErrorData }
		}
		if json.Unmarshal(data, &got); got.Error.Data.Kind != "usage" || got.Error.Data.ExitCode != ExitUsage {
			t.Errorf("%s with an unknown argument: structured content %s; want a usage error", c.name, data)
		}
	}
	res := f.call(t, "ckpt_show", map[string]any{"ref": "@9"})
	checkOutput(t, schemas, "ckpt_show", res)
	data, _ := json.Marshal(res.StructuredContent)
	var got struct {
		Error struct{ Data ErrorData }
	}
	if json.Unmarshal(data, &got); !res.IsError || got.Error.Data.Kind != "unknown_ref" {
		t.Errorf("unknown ref = %s", data)
	}
	if _, err := f.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ckpt_nope"}); err == nil {
		t.Error("an unknown tool succeeded")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if fmt.Sprint(f.events) != "[initialize checkpoint restore checkpoint]" {
		t.Errorf("events = %v", f.events)
	}
}

// A call with _meta.progressToken gets progress notifications; cancelling
// a call's context in the middle sends notifications/cancelled and ends the
// call, and the session goes on.
func TestMCPProgressAndCancellation(t *testing.T) {
	f := newMCPFixture(t)
	for i := range 300 {
		if err := os.WriteFile(filepath.Join(f.ws, fmt.Sprintf("f%d", i)), []byte(fmt.Sprint(i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f.call(t, "ckpt_save", map[string]any{})
	params := &mcp.CallToolParams{Name: "ckpt_verify", Arguments: map[string]any{}}
	params.SetProgressToken("v1")
	if res, err := f.cs.CallTool(context.Background(), params); err != nil || res.IsError {
		t.Fatalf("verify: %v %+v", err, res)
	}
	// The client hands notifications to their handler on its own
	// goroutine, so the first may land just after the result: wait for it.
	testbound.Within(t, testbound.Hang, func() { <-f.progCh }) // drained: the next signal is the next call's
	f.mu.Lock()
	if len(f.progress) == 0 || f.progress[0].ProgressToken != "v1" || f.progress[0].Total == 0 {
		t.Errorf("progress = %+v", f.progress)
	}
	f.mu.Unlock()

	// The server's first progress of the second call waits, unsent, for
	// its request's cancellation; the call cannot finish before that.
	hold := &progressHold{token: "v2", reached: make(chan struct{}), released: make(chan struct{})}
	f.hold.Store(hold)
	ctx, cancel := context.WithCancel(context.Background())
	params.SetProgressToken("v2")
	done := make(chan error, 1)
	go func() {
		_, err := f.cs.CallTool(ctx, params)
		done <- err
	}()
	testbound.Within(t, testbound.Hang, func() { <-hold.reached })
	cancel()
	testbound.Within(t, testbound.Hang, func() {
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled call: %v", err)
		}
		<-hold.released // the server cancelled the request's context
	})
	if err := f.cs.Ping(context.Background(), nil); err != nil {
		t.Fatalf("ping after a cancellation: %v", err)
	}
}
