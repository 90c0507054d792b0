package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/internal/localsock"
)

// stoppingServer listens on the store's endpoint as a server that stops as
// its next client reaches it: it reads the client's first line, then
// removes its endpoint and closes the connection without an answer, as
// server.Listen does for a client that comes as its idle period expires.
// It returns once the endpoint accepts clients.
func (e *env) stoppingServer() {
	e.t.Helper()
	ln, err := localsock.Listen(e.store)
	if err != nil {
		e.t.Fatal(err)
	}
	go func() {
		conn, err := ln.Accept()
		if err == nil {
			bufio.NewReader(conn).ReadBytes('\n')
		}
		ln.Close()
		if conn != nil {
			conn.Close()
		}
	}()
	e.t.Cleanup(func() { ln.Close() })
}

// A client that a stopping server turns away ran nothing there and
// carries on as if no server had listened: a CLI command opens the store
// itself (its --state input, read for the server, reaches its save),
// serve and mcp serve the store themselves, and serve --listen listens
// itself instead of saying a server already does.
func TestClientsTurnedAwayByAStoppingServerCarryOn(t *testing.T) {
	e := newEnv(t)
	e.write("f", "v1")
	e.ok("save", "-m", "first")

	e.stoppingServer()
	e.write("f", "v2")
	r := e.run(`{"turn":2}`, "--lock-timeout", "0", "save", "--state", "-", "--json")
	if r.code != 0 {
		t.Fatalf("a save turned away by a stopping server: exit %d, %s", r.code, r.stderr)
	}
	if saved := decode[protocol.SaveJSON](t, r.stdout); !saved.Created || saved.Seq != 2 {
		t.Fatalf("the save turned away = %+v; want checkpoint 2 made", saved)
	}
	out := filepath.Join(t.TempDir(), "state.json")
	e.ok("restore", "@2", "--only", "state", "--state-out", out)
	if b, _ := os.ReadFile(out); string(b) != `{"turn":2}` {
		t.Fatalf("the state of the save turned away = %q", b)
	}

	e.stoppingServer()
	_, s, end := e.stdioServe()
	var list protocol.LogJSON
	s.OK("list", nil, &list)
	if len(list.Checkpoints) != 2 {
		t.Fatalf("serve turned away by a stopping server lists %d checkpoints, want 2", len(list.Checkpoints))
	}
	end()

	e.stoppingServer()
	h := e.mcpClient()
	if text, failed := h.call(t, &mcp.CallToolParams{Name: "ckpt_list"}); failed || !strings.Contains(text, "first") {
		t.Fatalf("mcp turned away by a stopping server: list failed %v: %s", failed, text)
	}
	h.cs.Close()

	e.stoppingServer()
	srv := e.listenServer() // fails unless it says it listens itself
	if got := e.ok("--lock-timeout", "0", "list"); !strings.Contains(got, "first") {
		t.Fatalf("list through the server that listened instead = %q", got)
	}
	srv.Process.Kill()
}
