package main

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/internal/localsock"
)

// Two names that differ only in bytes that are not UTF-8 (Linux file
// systems take any bytes; macOS and Windows refuse such names, so this
// test is Linux only) stay apart in ls, diff and log --json, and the
// name decoded from a reported path_base64, given back on the command
// line, restores exactly that file: without a server, and through one
// (which gets the command line as JSON).
func TestCLINamesThatAreNotUTF8RoundTrip(t *testing.T) {
	e := newEnv(t)
	ff, fe := "a\xff", "a\xfe"
	e.write(ff, "ff one\n")
	e.write(fe, "fe one\n")
	e.ok("save", "-m", "one")
	e.write(ff, "ff two\n")
	e.write(fe, "fe two\n")
	e.ok("save", "-m", "two")

	names := func(args ...string) []string {
		t.Helper()
		ls := decode[protocol.LsJSON](t, e.ok(args...))
		var out []string
		for _, en := range ls.Entries {
			out = append(out, rawName(t, en.Path, en.PathBase64))
		}
		return out
	}
	reported := names("ls", "--json", "@2")
	if !slices.Equal(reported, []string{fe, ff}) {
		t.Fatalf("ls --json names %q, want %q", reported, []string{fe, ff})
	}
	diff := decode[protocol.DiffJSON](t, e.ok("diff", "--json", "@1", "@2"))
	if len(diff.Files) != 2 || rawName(t, diff.Files[0].Path, diff.Files[0].PathBase64) != fe ||
		rawName(t, diff.Files[1].Path, diff.Files[1].PathBase64) != ff {
		t.Fatalf("diff --json = %+v", diff.Files)
	}
	hist := decode[protocol.HistoryJSON](t, e.ok("log", "--json", ff))
	if len(hist.Entries) != 2 || rawName(t, hist.Entries[0].Changes[0].Path, hist.Entries[0].Changes[0].PathBase64) != ff {
		t.Fatalf("log --json %q = %+v", ff, hist.Entries)
	}

	res := decode[protocol.RestoreJSON](t, e.ok("restore", "--json", "@1", "--", reported[1]))
	if len(res.WrittenPathsBase64) != 1 || rawName(t, res.WrittenPaths[0], &res.WrittenPathsBase64[0]) != ff {
		t.Fatalf("restore --json = %+v", res)
	}
	if got := [2]string{e.read(ff), e.read(fe)}; got != [2]string{"ff one\n", "fe two\n"} {
		t.Fatalf("after restoring %q: %q", ff, got)
	}

	srv := e.listenServer()
	if got := names("--lock-timeout", "0", "ls", "--json", "@2"); !slices.Equal(got, reported) {
		t.Fatalf("ls --json through the server names %q, want %q", got, reported)
	}
	e.ok("--lock-timeout", "0", "restore", "@1", "--", reported[0])
	if got := [2]string{e.read(ff), e.read(fe)}; got != [2]string{"ff one\n", "fe one\n"} {
		t.Fatalf("after restoring %q through the server: %q", fe, got)
	}
	if r := e.run("", "--lock-timeout", "0", "restore", "@2", "--", "a\ufffd"); r.code != protocol.ExitUsage {
		t.Fatalf("restoring the lossy name through the server: exit %d %q, want %d", r.code, r.stderr, protocol.ExitUsage)
	}
	stopServer(t, srv, e.store)
}

// rawName is a reported name's bytes: path_base64 decoded when given.
func rawName(t *testing.T, path string, pathBase64 *string) string {
	t.Helper()
	if pathBase64 == nil {
		return path
	}
	b, err := base64.StdEncoding.DecodeString(*pathBase64)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A listening server whose workspace and store directories have names
// that are not valid UTF-8 gives their bytes beside them: in attach's
// result, the initialize event and serve --listen --json's line.
func TestServerNamesDirectoriesThatAreNotUTF8(t *testing.T) {
	e := newEnv(t)
	e.ws, e.store = filepath.Join(e.ws, "ws\xff"), filepath.Join(filepath.Dir(e.store), "store\xfe")
	if err := os.Mkdir(e.ws, 0o755); err != nil {
		t.Fatal(err)
	}
	e.write("a.txt", "one\n")
	e.listenServer()
	c := e.dialRPC()
	r := c.call("attach", map[string]any{}) // a name that is not UTF-8 cannot travel as a JSON string
	var res protocol.AttachResult
	if err := json.Unmarshal(r.Result, &res); r.Error != nil || err != nil {
		t.Fatalf("attach: %+v %v", r.Error, err)
	}
	if ws, store := rawName(t, res.Workspace, res.WorkspaceBase64), rawName(t, res.Store, res.StoreBase64); ws != e.ws || store != e.store {
		t.Fatalf("attach names workspace %q and store %q, want %q and %q", ws, store, e.ws, e.store)
	}
	if saved := c.call("save", map[string]any{}); saved.Error != nil || len(c.events) == 0 || c.events[0].Method != "initialize" {
		t.Fatalf("save: %+v, events %+v", saved.Error, c.events)
	}
	var ev protocol.InitializeEvent
	if err := json.Unmarshal(c.events[0].Params, &ev); err != nil || rawName(t, ev.WorkspaceDir, ev.WorkspaceDirBase64) != e.ws {
		t.Fatalf("initialize %s (%v) names another workspace than %q", c.events[0].Params, err, e.ws)
	}
	line := decode[struct {
		Listening       string  `json:"listening"`
		ListeningBase64 *string `json:"listening_base64"`
		Store           string  `json:"store"`
		StoreBase64     *string `json:"store_base64"`
	}](t, e.ok("--json", "serve", "--listen"))
	if got := rawName(t, line.Store, line.StoreBase64); got != e.store {
		t.Fatalf("serve --listen --json names store %q, want %q", got, e.store)
	}
	if got := rawName(t, line.Listening, line.ListeningBase64); got != localsock.Endpoint(e.store) {
		t.Fatalf("serve --listen --json names endpoint %q, want %q", got, localsock.Endpoint(e.store))
	}
}
