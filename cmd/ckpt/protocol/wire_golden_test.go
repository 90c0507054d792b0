package protocol_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/cmd/ckpt/protocol/protocoltest"
	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the wire goldens under testdata/wire")

// wireDir holds the wire-shape goldens the TypeScript client's tests read
// too (clients/typescript/test/wire.test.mjs).
const wireDir = "../../../testdata/wire"

// wireCall is one request of the golden session.
type wireCall struct {
	golden, method string
	params         map[string]any
	edit           map[string]string // files written before the call
}

// The results of the host methods and the events they send keep the shapes
// in testdata/wire, byte for byte once the clock-dependent fields are
// normalised; every MCP tool answers with the same structured content as
// its JSON-RPC method. Run with -update to rewrite the goldens after a
// deliberate change of the wire schema (and update the TypeScript types).
func TestWireShapesMatchTheGoldens(t *testing.T) {
	ws := t.TempDir()
	c, mcpCall := wireSession(t, ws)
	exportDir := filepath.Join(t.TempDir(), "export")
	failsWithCBin := "test ! -e c.bin" // the bisect's test: checkpoints with c.bin are bad
	if runtime.GOOS == "windows" {
		failsWithCBin = "if exist c.bin (exit 1) else (exit 0)"
	}
	calls := []wireCall{
		{golden: "save", method: "save", params: map[string]any{"message": "first"},
			edit: map[string]string{"a.txt": "one\n", "src/b.go": "package b\n"}},
		{golden: "save-second", method: "save", params: map[string]any{"message": "second", "state": "conversation", "meta": map[string]string{"tool": "edit"}},
			edit: map[string]string{"a.txt": "two\n", "c.bin": "\x00\xff"}},
		{golden: "list", method: "list", params: map[string]any{}},
		{golden: "show", method: "show", params: map[string]any{"ref": "@2"}},
		{golden: "ls", method: "ls", params: map[string]any{"ref": "@2"}},
		{golden: "cat", method: "cat", params: map[string]any{"ref": "@2", "path": "a.txt"}},
		{golden: "cat-binary", method: "cat", params: map[string]any{"ref": "@2", "path": "c.bin"}},
		{golden: "diff", method: "diff", params: map[string]any{"from": "@1", "to": "@2"}},
		{golden: "tasks", method: "tasks", params: map[string]any{}},
		{golden: "save-third", method: "save", params: map[string]any{"message": "third"}, edit: map[string]string{"a.txt": "three\n"}},
		{golden: "log", method: "log", params: map[string]any{"paths": []string{"a.txt"}}},
		{golden: "export", method: "export", params: map[string]any{"ref": "@2", "dir": exportDir}},
		{golden: "bisect", method: "bisect", params: map[string]any{"good": "@1", "bad": "@3", "run": failsWithCBin}},
		{golden: "restore-dry-run", method: "restore", params: map[string]any{"ref": "@1", "dry_run": true}},
		{golden: "restore", method: "restore", params: map[string]any{"ref": "@1", "only": "both"}},
		{golden: "verify", method: "verify", params: map[string]any{}},
		{golden: "stats", method: "stats", params: map[string]any{}},
		{golden: "error-unknown-ref", method: "show", params: map[string]any{"ref": "@99"}},
	}
	var events []json.RawMessage
	norm := &normaliser{ws: ws, exportDir: exportDir}
	for step, call := range calls {
		// Each step's files get a modification time of their own, long
		// past: none is racily clean (which a save rehashes, so bytes_hashed
		// would follow the machine's speed), and same-size edits still show.
		stamp := wireClock.Add(time.Duration(step-len(calls)) * time.Hour)
		for name, content := range call.edit {
			path := filepath.Join(ws, name)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(path, stamp, stamp); err != nil {
				t.Fatal(err)
			}
		}
		m, notes := c.Call(call.method, call.params)
		for _, n := range notes {
			doc, err := json.Marshal(map[string]any{"method": n.Method, "params": n.Params})
			if err != nil {
				t.Fatal(err)
			}
			events = append(events, doc)
		}
		var got []byte
		var err error
		if m.Error != nil {
			got, err = json.Marshal(map[string]any{"error": m.Error})
		} else {
			got = m.Result
			if readOnly(call.method) { // asked again as an MCP tool: the same shape
				if sc := mcpCall(call.method, call.params); !sameJSON(t, sc, got) {
					t.Errorf("MCP ckpt_%s = %s, JSON-RPC %s = %s", call.method, sc, call.method, got)
				}
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, norm, call.golden, got)
	}
	all, err := json.Marshal(events)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, norm, "events", all)
}

// wireClock is the engine's time in the golden sessions.
var wireClock = time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)

// wireSession serves an engine on workspace ws, whose clock stands still,
// over JSON-RPC (the client returned) and MCP (the function calling a tool
// and returning its structured content), until the test ends.
func wireSession(t *testing.T, ws string) (*protocoltest.Client, func(method string, params map[string]any) []byte) {
	ctx := context.Background()
	e, err := engine.Open(ctx, ws, engine.Options{StoreDir: filepath.Join(t.TempDir(), "store"), Now: func() time.Time { return wireClock }})
	if err != nil {
		t.Fatal(err)
	}
	session := protocol.Session{Task: engine.DefaultTask}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { err := protocol.ServeJSONRPC(ctx, e, session, inR, outW); outW.Close(); done <- err }()
	c := protocoltest.NewClient(t, inW, outR)
	t.Cleanup(func() {
		inW.Close()
		c.Drain()
		if err := <-done; err != nil {
			t.Error(err)
		}
		e.Close()
	})
	return c, mcpSession(t, e, session)
}

// readOnly methods can be asked twice without changing what they answer.
func readOnly(method string) bool {
	switch method {
	case "list", "show", "ls", "cat", "diff", "tasks", "log":
		return true
	}
	return false
}

// mcpSession serves e as MCP tools to an in-memory client and returns a
// function calling a tool, returning its structured content.
func mcpSession(t *testing.T, e *engine.Engine, s protocol.Session) func(method string, params map[string]any) []byte {
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := protocol.NewMCPServer(e, s, "test").Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "golden", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return func(method string, params map[string]any) []byte {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ckpt_" + method, Arguments: params})
		if err != nil || res.IsError {
			t.Fatalf("ckpt_%s: %v %+v", method, err, res)
		}
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

// sameJSON reports whether two JSON documents decode to equal values.
func sameJSON(t *testing.T, a, b []byte) bool {
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(va, vb)
}

// checkGolden compares doc, normalised by n, with testdata/wire/NAME.json, or
// rewrites that file under -update.
func checkGolden(t *testing.T, n *normaliser, name string, doc []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	got, err := json.MarshalIndent(n.value(v), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join(wireDir, name+".json")
	if _, ok := golden.Match(t, path, got, *update); !ok {
		t.Errorf("%s differs from %s (run with -update after a deliberate change):\n%s", name, path, got)
	}
}

// normaliser replaces what depends on the run rather than on the shapes:
// durations and the index's size on disk (0), the workspace's and the export's temporary paths (in
// workspaceDir and absolute paths, also in their base64 form), and checkpoint and object
// ids (the checkpoint's stats hold a measured duration), each id by a
// placeholder numbered in order of first appearance across the session, so
// that a document still names the same checkpoint as another.
type normaliser struct {
	ws        string // the workspace's path, written WORKSPACE
	exportDir string // the export's directory, written EXPORT
	ids       map[string]string
}

var hexID = regexp.MustCompile(`^[0-9a-f]{64}$`)

func (n *normaliser) value(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			switch k {
			case "duration_ms", "duration":
				v[k] = 0
			case "phases_ms": // each phase's time, its name kept
				if phases, ok := v[k].(map[string]any); ok {
					for name := range phases {
						phases[name] = 0
					}
				}
			case "disk_bytes", "index_bytes": // the index's files on disk, whose size varies by a few bytes
				v[k] = 0
			case "absolute_base64":
				v[k] = n.base64(v[k])
			default:
				v[k] = n.value(v[k])
			}
		}
	case []any:
		for i, x := range v {
			v[i] = n.value(x)
		}
	case string:
		if rest, ok := strings.CutPrefix(v, n.ws); ok {
			return "WORKSPACE" + filepath.ToSlash(rest)
		}
		if v == n.exportDir {
			return "EXPORT"
		}
		if !hexID.MatchString(v) {
			return v
		}
		if n.ids == nil {
			n.ids = map[string]string{}
		}
		if _, ok := n.ids[v]; !ok {
			n.ids[v] = fmt.Sprintf("%064x", len(n.ids)+1)
		}
		return n.ids[v]
	}
	return v
}

// base64 is v, the base64 of an absolute path, with the workspace's
// temporary path written WORKSPACE.
func (n *normaliser) base64(v any) any {
	s, _ := v.(string)
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return v
	}
	return base64.StdEncoding.EncodeToString([]byte(n.value(string(b)).(string)))
}
