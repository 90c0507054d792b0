package protocol_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/cmd/ckpt/protocol/protocoltest"
	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/jsonrpc"
)

// rpcSession is a serve connection on a fresh workspace, driven one
// request at a time.
type rpcSession struct {
	*protocoltest.Client
	t  *testing.T
	ws string
	e  *engine.Engine
}

// newRPCSession opens an engine on a fresh workspace and serves it as
// `ckpt serve` does, over pipes.
func newRPCSession(t *testing.T) *rpcSession {
	t.Helper()
	ws := t.TempDir()
	scans := &protocol.ScanHub{}
	e, err := engine.Open(context.Background(), ws, engine.Options{StoreDir: filepath.Join(t.TempDir(), "store"), OnProgress: scans.Send})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := protocol.ServeJSONRPC(context.Background(), e, protocol.Session{Task: engine.DefaultTask, Scans: scans}, inR, outW)
		outW.Close()
		done <- err
	}()
	s := &rpcSession{Client: protocoltest.NewClient(t, inW, outR), t: t, ws: ws, e: e}
	t.Cleanup(func() {
		inW.Close()
		s.Drain()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		if err := e.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

func (s *rpcSession) write(name string, content []byte) {
	s.t.Helper()
	if err := os.WriteFile(filepath.Join(s.ws, name), content, 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// Every method answers with its --json shape; events come per task in Roo
// Code's shape, checkpoint only when one was created.
func TestServeMethodsAndEvents(t *testing.T) {
	s := newRPCSession(t)
	s.write("a.txt", []byte("one\n"))
	var first protocol.SaveJSON
	notes := s.OK("save", map[string]any{"message": "first", "state": "conversation v1"}, &first)
	if len(notes) != 2 || notes[0].Method != "initialize" || notes[1].Method != "checkpoint" {
		t.Fatalf("events of the first save = %v", notes)
	}
	var ini protocol.InitializeEvent
	json.Unmarshal(notes[0].Params, &ini)
	if ini.BaseHash != first.ID || !ini.Created || ini.WorkspaceDir != s.ws || ini.Task != "default" {
		t.Fatalf("initialize = %+v", ini)
	}
	if notes = s.OK("save", map[string]any{}, nil); len(notes) != 0 {
		t.Fatalf("a save that created nothing sent %v", notes)
	}
	s.write("a.txt", []byte("two\n"))
	var second protocol.SaveJSON
	notes = s.OK("save", map[string]any{}, &second)
	var cp protocol.CheckpointEvent
	if len(notes) != 1 || json.Unmarshal(notes[0].Params, &cp) != nil || cp.FromHash != first.ID || cp.ToHash != second.ID {
		t.Fatalf("checkpoint event = %v", notes)
	}
	var other protocol.SaveJSON
	notes = s.OK("save", map[string]any{"task": "chat-2", "allow_empty": true}, &other)
	json.Unmarshal(notes[0].Params, &ini)
	if notes[0].Method != "initialize" || ini.Task != "chat-2" || ini.BaseHash != other.ID {
		t.Fatalf("second task's initialize = %v", notes)
	}

	var log protocol.LogJSON
	s.OK("list", map[string]any{}, &log)
	var show protocol.CheckpointJSON
	s.OK("show", map[string]any{"ref": "@1"}, &show)
	var ls protocol.LsJSON
	s.OK("ls", map[string]any{"ref": "HEAD"}, &ls)
	var cat protocol.CatJSON
	s.OK("cat", map[string]any{"ref": "@1", "path": "a.txt"}, &cat)
	var tasks protocol.TasksJSON
	s.OK("tasks", nil, &tasks)
	var stats protocol.StoreStatsJSON
	s.OK("stats", nil, &stats)
	var verify protocol.VerifyJSON
	s.OK("verify", map[string]any{"quick": true}, &verify)
	switch {
	case len(log.Checkpoints) != 2 || log.Head != second.ID:
		t.Errorf("list = %+v", log)
	case show.ID != first.ID || show.Message != "first":
		t.Errorf("show = %+v", show)
	case len(ls.Entries) != 1 || ls.Entries[0].Path != "a.txt":
		t.Errorf("ls = %+v", ls)
	case cat.Content == nil || *cat.Content != "one\n" || cat.Size != 4:
		t.Errorf("cat = %+v", cat)
	case len(tasks.Tasks) != 2 || stats.Checkpoints != 3 || !verify.OK:
		t.Errorf("tasks = %+v, stats = %+v, verify = %+v", tasks, stats, verify)
	}

	var state protocol.HostRestoreJSON
	notes = s.OK("restore", map[string]any{"ref": "@1", "only": "state"}, &state)
	if state.StateContent == nil || *state.StateContent != "conversation v1" || len(notes) != 1 || notes[0].Method != "restore" {
		t.Fatalf("state-only restore = %+v, events %v", state, notes)
	}
	s.OK("list", map[string]any{}, &log)
	if log.Head != second.ID {
		t.Fatalf("a state-only restore moved the head to %s", log.Head)
	}
	var drop protocol.DropJSON
	s.OK("drop", map[string]any{"task": "chat-2"}, &drop)
	var gc protocol.GCJSON
	s.OK("gc", map[string]any{"keep_last": 5}, &gc)
	if drop.Task != "chat-2" || len(drop.Checkpoints) != 1 || gc.Policy.KeepLast != 5 {
		t.Fatalf("drop = %+v, gc = %+v", drop, gc)
	}
}

// Bytes survive JSON: sides (of text and of binary files) and state that
// are not UTF-8 travel as base64.
func TestServeKeepsBytes(t *testing.T) {
	s := newRPCSession(t)
	latin1 := []byte("caf\xe9\n")
	s.write("l.txt", latin1)
	s.write("t.txt", []byte("text\n"))
	bin := []byte("\x00\xffbinary")
	s.write("b.bin", bin)
	blob := []byte{0xff, 0x00, 0xfe}
	s.OK("save", map[string]any{"state_base64": base64.StdEncoding.EncodeToString(blob)}, nil)
	s.write("l.txt", []byte("caf\xe8\n"))
	s.write("t.txt", []byte("more text\n"))
	s.write("b.bin", append(bin, 0))
	var diff protocol.HostDiffJSON
	s.OK("diff", map[string]any{}, &diff)
	if len(diff.Files) != 3 {
		t.Fatalf("diff = %+v", diff)
	}
	for _, f := range diff.Files {
		switch f.Path {
		case "b.bin":
			if !f.Binary || f.Before != nil || f.BeforeBase64 == nil || *f.BeforeBase64 != base64.StdEncoding.EncodeToString(bin) ||
				f.AfterBase64 == nil || *f.AfterBase64 != base64.StdEncoding.EncodeToString(append(bin, 0)) {
				t.Errorf("binary file = %+v", f)
			}
		case "l.txt":
			if f.Before != nil || f.BeforeBase64 == nil || *f.BeforeBase64 != base64.StdEncoding.EncodeToString(latin1) ||
				f.AfterBase64 == nil || *f.AfterBase64 != base64.StdEncoding.EncodeToString([]byte("caf\xe8\n")) {
				t.Errorf("non-UTF-8 file = %+v", f)
			}
		case "t.txt":
			if f.Before == nil || *f.Before != "text\n" || *f.After != "more text\n" || f.BeforeBase64 != nil {
				t.Errorf("text file = %+v", f)
			}
		}
	}
	var cat protocol.CatJSON
	s.OK("cat", map[string]any{"ref": "HEAD", "path": "l.txt"}, &cat)
	if cat.ContentBase64 == nil || *cat.ContentBase64 != base64.StdEncoding.EncodeToString(latin1) {
		t.Fatalf("cat = %+v", cat)
	}
	var res protocol.HostRestoreJSON
	s.OK("restore", map[string]any{"ref": "HEAD", "only": "both"}, &res)
	if res.StateContentBase64 == nil || *res.StateContentBase64 != base64.StdEncoding.EncodeToString(blob) {
		t.Fatalf("restore state = %+v", res)
	}
	if b, _ := os.ReadFile(filepath.Join(s.ws, "l.txt")); string(b) != string(latin1) {
		t.Fatalf("restored l.txt = %q", b)
	}
}

// Errors carry exit_code and kind; usage mistakes are Invalid Params.
func TestServeErrorKinds(t *testing.T) {
	s := newRPCSession(t)
	s.write("a.txt", []byte("one\n"))
	s.OK("save", map[string]any{}, nil)
	for _, c := range []struct {
		method string
		params any
		code   int
		kind   string
	}{
		{"restore", map[string]any{"ref": "@7"}, jsonrpc.CodeServerError, "unknown_ref"},
		{"show", map[string]any{}, jsonrpc.CodeInvalidParams, "usage"},
		{"save", map[string]any{"state": "a", "state_base64": "YQ=="}, jsonrpc.CodeInvalidParams, "usage"},
		{"restore", map[string]any{"ref": "HEAD", "only": "bogus"}, jsonrpc.CodeInvalidParams, "usage"},
		{"save", map[string]any{"bogus": true}, jsonrpc.CodeInvalidParams, "usage"},
		{"list", []any{}, jsonrpc.CodeInvalidParams, "usage"},
		{"list", map[string]any{"task": 5}, jsonrpc.CodeInvalidParams, "usage"},
		{"diff", map[string]any{"mode": "checkpoint", "from": "@1"}, jsonrpc.CodeInvalidParams, "usage"},
		{"diff", map[string]any{"mode": "checkpoint"}, jsonrpc.CodeInvalidParams, "usage"},
		{"diff", map[string]any{"mode": "bogus", "ref": "@1"}, jsonrpc.CodeInvalidParams, "usage"},
		{"rm", map[string]any{}, jsonrpc.CodeMethodNotFound, ""},
	} {
		m, events := s.Call(c.method, c.params)
		if m.Error == nil || m.Error.Code != c.code || m.Error.Data.Kind != c.kind {
			t.Errorf("%s %v = %+v, want code %d kind %q", c.method, c.params, m.Error, c.code, c.kind)
		}
		for _, ev := range events {
			if ev.Method == "error" {
				t.Errorf("%s %v sent an error event %s; a caller's own mistake is only its answer", c.method, c.params, ev.Params)
			}
		}
	}
	// A restore that leaves conflicts is a conflict error holding them.
	if err := os.MkdirAll(filepath.Join(s.ws, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	s.write("d/f", []byte("x"))
	s.OK("save", map[string]any{}, nil)
	if err := os.Remove(filepath.Join(s.ws, "d/f")); err != nil {
		t.Fatal(err)
	}
	s.write("d/new", []byte("uncaptured"))
	m, _ := s.Call("restore", map[string]any{"ref": "@1", "no_backup": true})
	if m.Error == nil || m.Error.Data.Kind != "conflict" || m.Error.Data.ExitCode != protocol.ExitConflicts || len(m.Error.Data.Conflicts) == 0 {
		t.Fatalf("conflicting restore = %+v", m.Error)
	}
	if !strings.Contains(m.Error.Data.Conflicts[0].Path, "d") || m.Error.Data.Restore == nil {
		t.Fatalf("conflicts = %+v", m.Error.Data)
	}
}
