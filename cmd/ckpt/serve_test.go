package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/jsonrpc"
)

// rpcSession is a serve connection driven one request at a time.
type rpcSession struct {
	t    *testing.T
	ws   string
	in   io.WriteCloser
	out  *bufio.Scanner
	id   int
	done chan error
}

// wireMsg is any message serve writes.
type wireMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int          `json:"code"`
		Message string       `json:"message"`
		Data    rpcErrorData `json:"data"`
	} `json:"error"`
}

// newRPCSession opens an engine on a fresh workspace and serves it as
// `ckpt serve` does, over pipes.
func newRPCSession(t *testing.T) *rpcSession {
	t.Helper()
	ws := t.TempDir()
	a := &app{task: engine.DefaultTask, scans: &scanHub{}}
	e, err := engine.Open(context.Background(), ws, engine.Options{StoreDir: filepath.Join(t.TempDir(), "store"), OnProgress: a.scans.send})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var conn *jsonrpc.Conn
	srv, err := jsonrpc.NewServer(jsonrpc.Options{MapError: rpcError},
		hostMethods(a, e, func(m string, p any) { _ = conn.Notify(m, p) })...)
	if err != nil {
		t.Fatal(err)
	}
	conn = srv.NewConn(inR, outW)
	s := &rpcSession{t: t, ws: ws, in: inW, out: bufio.NewScanner(outR), done: make(chan error, 1)}
	s.out.Buffer(nil, 64<<20)
	go func() { err := conn.Serve(context.Background()); outW.Close(); s.done <- err }()
	t.Cleanup(func() {
		inW.Close()
		for s.out.Scan() {
		}
		if err := <-s.done; err != nil {
			t.Errorf("serve: %v", err)
		}
		if err := e.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

// send writes one raw line.
func (s *rpcSession) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

// next reads one message.
func (s *rpcSession) next() wireMsg {
	s.t.Helper()
	if !s.out.Scan() {
		s.t.Fatalf("serve ended: %v", s.out.Err())
	}
	var m wireMsg
	if err := json.Unmarshal(s.out.Bytes(), &m); err != nil {
		s.t.Fatalf("%q: %v", s.out.Text(), err)
	}
	return m
}

// call sends a request and returns its reply and the notifications sent
// before it.
func (s *rpcSession) call(method string, params any) (wireMsg, []wireMsg) {
	s.t.Helper()
	s.id++
	p, err := json.Marshal(params)
	if err != nil {
		s.t.Fatal(err)
	}
	s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, s.id, method, p))
	var notes []wireMsg
	for {
		m := s.next()
		if m.Method != "" {
			notes = append(notes, m)
			continue
		}
		if string(m.ID) != fmt.Sprint(s.id) {
			s.t.Fatalf("reply to %s, want %d", m.ID, s.id)
		}
		return m, notes
	}
}

// ok calls method, fails on an error reply, and decodes the result into out.
func (s *rpcSession) ok(method string, params, out any) []wireMsg {
	s.t.Helper()
	m, notes := s.call(method, params)
	if m.Error != nil {
		s.t.Fatalf("%s: %+v", method, *m.Error)
	}
	if out != nil {
		if err := json.Unmarshal(m.Result, out); err != nil {
			s.t.Fatalf("%s result %s: %v", method, m.Result, err)
		}
	}
	return notes
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
	var first saveJSON
	notes := s.ok("save", map[string]any{"message": "first", "state": "conversation v1"}, &first)
	if len(notes) != 2 || notes[0].Method != "initialize" || notes[1].Method != "checkpoint" {
		t.Fatalf("events of the first save = %v", notes)
	}
	var ini initializeEvent
	json.Unmarshal(notes[0].Params, &ini)
	if ini.BaseHash != first.ID || !ini.Created || ini.WorkspaceDir != s.ws || ini.Task != "default" {
		t.Fatalf("initialize = %+v", ini)
	}
	if notes = s.ok("save", map[string]any{}, nil); len(notes) != 0 {
		t.Fatalf("a save that created nothing sent %v", notes)
	}
	s.write("a.txt", []byte("two\n"))
	var second saveJSON
	notes = s.ok("save", map[string]any{}, &second)
	var cp checkpointEvent
	if len(notes) != 1 || json.Unmarshal(notes[0].Params, &cp) != nil || cp.FromHash != first.ID || cp.ToHash != second.ID {
		t.Fatalf("checkpoint event = %v", notes)
	}
	var other saveJSON
	notes = s.ok("save", map[string]any{"task": "chat-2", "allow_empty": true}, &other)
	json.Unmarshal(notes[0].Params, &ini)
	if notes[0].Method != "initialize" || ini.Task != "chat-2" || ini.BaseHash != other.ID {
		t.Fatalf("second task's initialize = %v", notes)
	}

	var log logJSON
	s.ok("list", map[string]any{}, &log)
	var show checkpointJSON
	s.ok("show", map[string]any{"ref": "@1"}, &show)
	var ls lsJSON
	s.ok("ls", map[string]any{"ref": "HEAD"}, &ls)
	var cat catJSON
	s.ok("cat", map[string]any{"ref": "@1", "path": "a.txt"}, &cat)
	var tasks tasksResult
	s.ok("tasks", nil, &tasks)
	var stats storeStatsJSON
	s.ok("stats", nil, &stats)
	var verify verifyDoc
	s.ok("verify", map[string]any{"quick": true}, &verify)
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

	var state hostRestoreJSON
	notes = s.ok("restore", map[string]any{"ref": "@1", "only": "state"}, &state)
	if state.StateContent == nil || *state.StateContent != "conversation v1" || len(notes) != 1 || notes[0].Method != "restore" {
		t.Fatalf("state-only restore = %+v, events %v", state, notes)
	}
	s.ok("list", map[string]any{}, &log)
	if log.Head != second.ID {
		t.Fatalf("a state-only restore moved the head to %s", log.Head)
	}
	var drop dropJSON
	s.ok("drop", map[string]any{"task": "chat-2"}, &drop)
	var gc gcDoc
	s.ok("gc", map[string]any{"keep_last": 5}, &gc)
	if drop.Task != "chat-2" || len(drop.Checkpoints) != 1 || gc.Policy.KeepLast != 5 {
		t.Fatalf("drop = %+v, gc = %+v", drop, gc)
	}
}

// Bytes survive JSON: sides and state that are not UTF-8 travel as base64.
func TestServeKeepsBytes(t *testing.T) {
	s := newRPCSession(t)
	latin1 := []byte("caf\xe9\n")
	s.write("l.txt", latin1)
	s.write("t.txt", []byte("text\n"))
	blob := []byte{0xff, 0x00, 0xfe}
	s.ok("save", map[string]any{"state_base64": base64.StdEncoding.EncodeToString(blob)}, nil)
	s.write("l.txt", []byte("caf\xe8\n"))
	s.write("t.txt", []byte("more text\n"))
	var diff hostDiffJSON
	s.ok("diff", map[string]any{}, &diff)
	if len(diff.Files) != 2 {
		t.Fatalf("diff = %+v", diff)
	}
	for _, f := range diff.Files {
		switch f.Path {
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
	var cat catJSON
	s.ok("cat", map[string]any{"ref": "HEAD", "path": "l.txt"}, &cat)
	if cat.ContentBase64 == nil || *cat.ContentBase64 != base64.StdEncoding.EncodeToString(latin1) {
		t.Fatalf("cat = %+v", cat)
	}
	var res hostRestoreJSON
	s.ok("restore", map[string]any{"ref": "HEAD", "only": "both"}, &res)
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
	s.ok("save", map[string]any{}, nil)
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
		{"save", map[string]any{"bogus": true}, jsonrpc.CodeInvalidParams, ""},
		{"rm", map[string]any{}, jsonrpc.CodeMethodNotFound, ""},
	} {
		m, _ := s.call(c.method, c.params)
		if m.Error == nil || m.Error.Code != c.code || m.Error.Data.Kind != c.kind {
			t.Errorf("%s %v = %+v, want code %d kind %q", c.method, c.params, m.Error, c.code, c.kind)
		}
	}
	// A restore that leaves conflicts is a conflict error holding them.
	if err := os.MkdirAll(filepath.Join(s.ws, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	s.write("d/f", []byte("x"))
	s.ok("save", map[string]any{}, nil)
	if err := os.Remove(filepath.Join(s.ws, "d/f")); err != nil {
		t.Fatal(err)
	}
	s.write("d/new", []byte("uncaptured"))
	m, _ := s.call("restore", map[string]any{"ref": "@1", "no_backup": true})
	if m.Error == nil || m.Error.Data.Kind != "conflict" || m.Error.Data.ExitCode != exitConflicts || len(m.Error.Data.Conflicts) == 0 {
		t.Fatalf("conflicting restore = %+v", m.Error)
	}
	if !strings.Contains(m.Error.Data.Conflicts[0].Path, "d") || m.Error.Data.Restore == nil {
		t.Fatalf("conflicts = %+v", m.Error.Data)
	}
}
