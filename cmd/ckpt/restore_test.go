package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
)

func TestCLIStoreThatIsTheWorkspaceIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("a", "a\n")
	for _, store := range []string{e.ws, filepath.Dir(e.ws)} {
		in := &env{t: t, ws: e.ws, store: store, home: e.home}
		r := in.run("", "save")
		if r.code != protocol.ExitRefused || !strings.Contains(r.stderr, "may not be the workspace") || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("--store %s: exit %d, stderr %q; want exit 4 and one line", store, r.code, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(e.ws, "lock")); !os.IsNotExist(err) {
		t.Fatalf("a refused store wrote into the workspace: %v", err)
	}
}

func TestCLIRestoreWithConflictsExits6(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("top", "top\n")
	e.ok("save")
	e.write("top", "top\nEDIT\n")
	e.write("brandnew", "new\n")
	r := e.run("", "--json", "restore", "--no-backup", "@1")
	var doc protocol.RestoreJSON
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != protocol.ExitConflicts || len(doc.Conflicts) != 2 {
		t.Fatalf("exit %d, JSON %s (%v); want exit 6 and two conflicts", r.code, r.stdout, err)
	}
	if b, _ := os.ReadFile(filepath.Join(e.ws, "top")); string(b) != "top\nEDIT\n" {
		t.Fatalf("the unsaved edit was lost: %q", b)
	}
	r = e.run("", "restore", "--no-backup", "@1")
	if r.code != protocol.ExitConflicts || strings.Count(r.stderr, "ckpt: conflict: ") != 2 {
		t.Fatalf("text: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := e.run("", "restore", "--no-backup", "--dry-run", "@1"); r.code != protocol.ExitOK {
		t.Fatalf("a dry run exits %d, want 0: it reports the conflicts it would meet", r.code)
	}
	// --force without a backup destroys the unsaved edit and the new
	// file, and names both: no undo brings them back.
	r = e.run("", "restore", "--no-backup", "--force", "@1")
	if r.code != 0 || !strings.Contains(r.stderr, "ckpt: discarded, in no checkpoint: top\n") || !strings.Contains(r.stderr, "ckpt: discarded, in no checkpoint: brandnew\n") {
		t.Fatalf("--force: exit %d, stderr %q; want both paths named as discarded", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(e.ws, "top")); string(b) != "top\n" {
		t.Fatalf("--force did not restore top: %q", b)
	}
}

func TestCLIInterruptedRestoreIsReportedThenCompleted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("a", "a1\n")
	e.write("b", "b1\n")
	one := decode[protocol.SaveJSON](t, e.ok("save", "--json"))
	e.write("a", "a2\n")
	e.write("b", "b2\n")
	two := decode[protocol.SaveJSON](t, e.ok("save", "--json"))
	// A restore to @1 killed half way: a written, b not yet, a temporary
	// file left, the journal in the store.
	e.write("a", "a1\n")
	e.write(".ckpt-tmp-99999-1", "b1\n")
	journal, _ := json.Marshal(map[string]any{"task": "default", "target": one.ID, "backup": two.ID, "started": time.Now().UTC()})
	if err := os.WriteFile(filepath.Join(e.store, "restore.journal"), journal, 0o600); err != nil {
		t.Fatal(err)
	}

	var list struct {
		Pending *struct {
			Target string `json:"target"`
		} `json:"pending_restore"`
		Head string `json:"head"`
	}
	if err := json.Unmarshal([]byte(e.ok("list", "--json")), &list); err != nil || list.Pending == nil || list.Pending.Target != one.ID || list.Head != two.ID {
		t.Fatalf("list --json: pending %+v head %s (%v); want the pending restore to @1", list.Pending, list.Head, err)
	}
	if r := e.run("", "list"); !strings.Contains(r.stderr, "was interrupted") {
		t.Fatalf("list: stderr %q does not report the pending restore", r.stderr)
	}

	var save struct {
		Completed *protocol.RestoreJSON `json:"completed_restore"`
		Created   bool                  `json:"created"`
		ID        string                `json:"id"`
	}
	if err := json.Unmarshal([]byte(e.ok("save", "--json")), &save); err != nil || save.Completed == nil || save.Completed.Restored != one.ID {
		t.Fatalf("save --json: completed %+v (%v); want the restore to @1 completed first", save.Completed, err)
	}
	if save.Created || save.ID != one.ID {
		t.Fatalf("the save after completion created %v (id %s); want no change at @1", save.Created, save.ID)
	}
	for rel, want := range map[string]string{"a": "a1\n", "b": "b1\n"} {
		if b, _ := os.ReadFile(filepath.Join(e.ws, rel)); string(b) != want {
			t.Errorf("%s = %q, want %q", rel, b, want)
		}
	}
	if _, err := os.Stat(filepath.Join(e.ws, ".ckpt-tmp-99999-1")); !os.IsNotExist(err) {
		t.Errorf("the temporary file is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.store, "restore.journal")); !os.IsNotExist(err) {
		t.Errorf("the older version's journal is still there: %v", err)
	}
	if r := e.run("", "list", "--json"); strings.Contains(r.stdout, "pending_restore") {
		t.Errorf("still pending after completion: %s", r.stdout)
	}
}

// restore --state-out with a relative FILE writes it in the client's
// directory, through a server as without one, never in the server's.
func TestStateOutIsTheClientsFileThroughTheServer(t *testing.T) {
	e := newEnv(t)
	e.write("a", "a\n")
	e.ok("save")
	state := filepath.Join(t.TempDir(), "state")
	os.WriteFile(state, []byte("host state\n"), 0o600)
	e.ok("save", "--allow-empty", "--state", state)
	e.listenServer()
	name := fmt.Sprintf("ckpt-state-out-%d", os.Getpid())
	serverCwd, _ := os.Getwd() // the server's, which it inherited
	defer os.Remove(filepath.Join(serverCwd, name))
	client := t.TempDir()
	r := e.runIn(client, "", "--lock-timeout", "0", "restore", "@2", "--only", "state", "--state-out", name)
	if b, err := os.ReadFile(filepath.Join(client, name)); r.code != 0 || string(b) != "host state\n" {
		t.Fatalf("restore --state-out %s through the server: exit %d %q; the client's file holds %q (%v)", name, r.code, r.stderr, b, err)
	}
	if _, err := os.Stat(filepath.Join(serverCwd, name)); err == nil {
		t.Fatal("the state was written in the server's directory")
	}
}

// restore --state-out - puts only the state blob on stdout, cold and
// through a server: the summary goes to stderr, and with --json the one
// document on stdout holds the state instead.
func TestStateOutDashLeavesStdoutToTheBlob(t *testing.T) {
	e := newEnv(t)
	e.write("a", "a\n")
	blob := "host state\nwithout a final summary"
	state := filepath.Join(t.TempDir(), "state")
	os.WriteFile(state, []byte(blob), 0o600)
	e.ok("save", "--state", state)
	for _, server := range []bool{false, true} {
		if server {
			e.listenServer()
		}
		r := e.run("", "--lock-timeout", "0", "restore", "@1", "--only", "state", "--state-out", "-")
		if r.code != 0 || r.stdout != blob || !strings.Contains(r.stderr, "restored ") {
			t.Fatalf("server %v: restore --state-out -: exit %d, stdout %q, stderr %q; want the blob alone on stdout", server, r.code, r.stdout, r.stderr)
		}
		r = e.run("", "--lock-timeout", "0", "--json", "restore", "@1", "--only", "state", "--state-out", "-")
		doc := decode[struct {
			Restored     string  `json:"restored"`
			StateContent *string `json:"state_content"`
		}](t, r.stdout)
		if r.code != 0 || doc.StateContent == nil || *doc.StateContent != blob || doc.Restored == "" {
			t.Fatalf("server %v: --json restore --state-out -: exit %d, stdout %q; want one document holding the state", server, r.code, r.stdout)
		}
	}
}

// A path filter that names nothing, or an empty path, is a usage error
// (exit 2) for every command that takes paths, never a silent success
// or the whole workspace.
func TestCLIPathFilterThatMatchesNothingExits2(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "one\n")
	e.ok("save")
	e.write("a.txt", "two\n")
	for _, path := range []string{"nowhere", ""} {
		for _, args := range [][]string{
			{"restore", "@1", "--", path},
			{"diff", "@1", "--", path},
			{"log", path},
			{"export", "@1", filepath.Join(t.TempDir(), "out"), "--", path},
		} {
			if r := e.run("", args...); r.code != protocol.ExitUsage || r.stdout != "" {
				t.Errorf("ckpt %q: exit %d, stdout %q, stderr %q; want exit %d", args, r.code, r.stdout, r.stderr, protocol.ExitUsage)
			}
		}
	}
	if r := e.run("", "ls", "@1", "nowhere"); r.code != protocol.ExitUsage {
		t.Errorf("ls of a missing path: exit %d %q", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(e.ws, "a.txt")); string(b) != "two\n" {
		t.Fatalf("a refused restore changed a.txt: %q", b)
	}
}

// restore --only state delivers the state or refuses: without --state-out
// it did nothing and reported success ("0 written, 0 deleted"), and paths
// it silently ignored. Both are usage errors now (exit 2), dry run or not,
// before anything changes; under --json the document holds the state, as
// the JSON-RPC and MCP results do.
func TestCLIOnlyStateDeliversTheStateOrRefuses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.saveTwoStates()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"restore", "@1", "--only", "state"}, "--state-out"},
		{[]string{"restore", "@1", "--only", "state", "--dry-run"}, "--state-out"},
		{[]string{"restore", "@1", "--only", "both"}, "--only both needs --state-out"},
		{[]string{"restore", "@1", "--only", "state", "--state-out", "-", "--", "f"}, "no paths"},
		{[]string{"--json", "restore", "@1", "--only", "state", "--", "f"}, "no paths"},
	} {
		r := e.run("", c.args...)
		if r.code != protocol.ExitUsage || !strings.Contains(r.stderr+r.stdout, c.want) {
			t.Errorf("ckpt %q: exit %d, stdout %q, stderr %q; want exit %d naming %s", c.args, r.code, r.stdout, r.stderr, protocol.ExitUsage, c.want)
		}
	}
	doc := decode[struct {
		Restored     string  `json:"restored"`
		StateContent *string `json:"state_content"`
	}](t, e.ok("--json", "restore", "@1", "--only", "state"))
	if doc.StateContent == nil || *doc.StateContent != `{"turn":1}` || doc.Restored == "" {
		t.Fatalf("--json restore --only state: %+v; want the document to hold @1's state", doc)
	}
	if got := e.read("f"); got != "v2" {
		t.Fatalf("f = %q; a restore of the state only, or a refused one of both, changed a file", got)
	}
	if list := decode[protocol.LogJSON](t, e.ok("list", "--json")); len(list.Checkpoints) != 2 {
		t.Fatalf("%d checkpoints, want 2: the refused restores took a backup", len(list.Checkpoints))
	}
	doc = decode[struct {
		Restored     string  `json:"restored"`
		StateContent *string `json:"state_content"`
	}](t, e.ok("--json", "restore", "@2", "--only", "both"))
	if doc.StateContent == nil || *doc.StateContent != `{"turn":2}` {
		t.Fatalf("--json restore --only both: %+v; want the document to hold @2's state", doc)
	}
}
