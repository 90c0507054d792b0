package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/engine"
)

// badInput is one row of the bad-input matrix: a command line, the exit
// code, and the one-line message it must print (after "ckpt: " in text,
// as error.message with --json). {ws}, {store}, {other}, {file} and
// {prefix} stand for the paths and ambiguous prefix of the fixture; with
// prefix set, msg is only the message's beginning (the rest names a pid or
// candidates in no fixed order).
type badInput struct {
	name   string
	args   []string
	code   int
	msg    string
	prefix bool
	busy   bool // run while another process holds the store lock
	other  bool // run against a second workspace sharing the store
}

var badInputs = []badInput{
	// Usage: wrong arguments, commands and flags.
	{name: "show without a ref", args: []string{"show"}, code: 2, msg: "show: accepts 1 arg(s), received 0"},
	{name: "show with two refs", args: []string{"show", "@1", "@2"}, code: 2, msg: "show: accepts 1 arg(s), received 2"},
	{name: "cat without a path", args: []string{"cat", "@1"}, code: 2, msg: "cat: accepts 2 arg(s), received 1"},
	{name: "drop without a task", args: []string{"drop"}, code: 2, msg: "drop: accepts 1 arg(s), received 0"},
	{name: "unknown subcommand", args: []string{"bogus"}, code: 2, msg: `unknown command "bogus" for "ckpt"`},
	{name: "unknown flag", args: []string{"save", "--bogus"}, code: 2, msg: "unknown flag: --bogus"},
	{name: "unknown profile", args: []string{"--profile", "nope", "list"}, code: 2,
		msg: `bad request: unknown exclusion profile "nope"; want one of default, cline, roo, none`},
	{name: "unknown diff mode", args: []string{"diff", "--mode", "bogus"}, code: 2,
		msg: `--mode "bogus": want checkpoint, from-init, to-current or full`},
	{name: "negative max file size", args: []string{"--max-file-size", "-5", "save"}, code: 2,
		msg: "--max-file-size -5: want a byte count, 0 for 100 MiB or -1 for no limit"},
	{name: "negative lock timeout", args: []string{"--lock-timeout", "-1s", "save"}, code: 2,
		msg: "--lock-timeout -1s: want a duration of 0 (fail at once when busy) or more"},
	{name: "unknown --only", args: []string{"restore", "@1", "--only", "bogus"}, code: 2,
		msg: `bad request: --only must be workspace, state or both, not "bogus"`},
	{name: "negative keep-last", args: []string{"gc", "--keep-last", "-1"}, code: 2,
		msg: "bad request: the number of checkpoints to keep must not be negative, not -1"},
	{name: "negative max age", args: []string{"gc", "--max-age", "-1h"}, code: 2,
		msg: "bad request: the age limit must not be negative, not -1h0m0s"},
	{name: "unknown remote", args: []string{"remote", "remove", "nosuch"}, code: 2,
		msg: `bad request: no remote "nosuch"`},
	{name: "two diff formats", args: []string{"diff", "--stat", "--name-status"}, code: 2,
		msg: "--stat and --name-status: give one"},
	{name: "the workspace as the first of two refs", args: []string{"diff", "workspace", "@1"}, code: 2,
		msg: "the workspace can be only the second ref: ckpt diff @1 workspace shows the change the other way"},
	{name: "blank task", args: []string{"--task", " ", "save"}, code: 2,
		msg: `bad request: invalid task name " ": use 1-200 bytes of UTF-8 without '/', newlines or NUL, not all blank`},
	{name: "overlong task", args: []string{"--task", strings.Repeat("t", 5000), "list"}, code: 2,
		msg: `bad request: invalid task name "` + strings.Repeat("t", 40) + `"… (5000 bytes): use 1-200 bytes of UTF-8 without '/', newlines or NUL, not all blank`},
	{name: "workspace missing", args: []string{"-C", "/nonexistent/ws", "list"}, code: 2,
		msg: "workspace /nonexistent/ws does not exist"},
	{name: "workspace is a file", args: []string{"-C", "{file}", "list"}, code: 2, msg: "workspace {file} is not a directory"},
	// Refs.
	{name: "empty ref", args: []string{"show", ""}, code: 2,
		msg: `unknown ref "" in task "default": use an id or a unique prefix of 4+ hex characters, HEAD, HEAD~N or @N`},
	{name: "unknown ref", args: []string{"show", "deadbeef"}, code: 2,
		msg: `unknown ref "deadbeef" in task "default": use an id or a unique prefix of 4+ hex characters, HEAD, HEAD~N or @N`},
	{name: "ancestor past the root", args: []string{"show", "HEAD~99"}, code: 2,
		msg: `unknown ref "HEAD~99": the chain of task "default" is shorter than that`},
	{name: "HEAD^2", args: []string{"show", "HEAD^2"}, code: 2,
		msg: `unknown ref "HEAD^2" in task "default": use an id or a unique prefix of 4+ hex characters, HEAD, HEAD~N or @N`},
	{name: "sequence zero", args: []string{"show", "@0"}, code: 2,
		msg: `unknown ref "@0" in task "default": use an id or a unique prefix of 4+ hex characters, HEAD, HEAD~N or @N`},
	{name: "ambiguous prefix", args: []string{"show", "{prefix}"}, code: 2, msg: `ref "{prefix}" is ambiguous: it matches `, prefix: true},
	// Paths.
	{name: "path escaping the workspace", args: []string{"cat", "@1", "../x"}, code: 2,
		msg: `bad request: path "../x" leaves the workspace`},
	{name: "absolute path outside the workspace", args: []string{"cat", "@1", "/etc/passwd"}, code: 2,
		msg: `path "/etc/passwd" is outside the workspace; give a path inside it, absolute or relative to it`},
	{name: "restore path escaping the workspace", args: []string{"restore", "@1", "--", "../x"}, code: 2,
		msg: `bad request: bad path filter: "../x": give paths relative to the workspace, inside it`},
	// The store.
	{name: "store of another workspace", args: []string{"list"}, code: 4, other: true,
		msg: "store belongs to another workspace: store {store} records workspace {ws}, not {other}; pass --store with another directory"},
	{name: "busy store, no wait", args: []string{"--lock-timeout", "0", "save"}, code: 3, busy: true,
		msg: "store busy: pid ", prefix: true},
}

// TestBadInputMatrix runs every bad input in text and --json and checks the
// exit code and the one-line message of each.
func TestBadInputMatrix(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("f", "one")
	e.ok("save", "-m", "one")
	e.write("f", "two")
	e.ok("save", "-m", "two")
	prefix := ambiguousPrefix(t, e)
	ws, err := filepath.EvalSymlinks(e.ws)
	if err != nil {
		t.Fatal(err)
	}
	other := &env{t: t, ws: t.TempDir(), store: e.store, home: e.home}
	otherWS, err := filepath.EvalSymlinks(other.ws)
	if err != nil {
		t.Fatal(err)
	}
	vars := strings.NewReplacer("{ws}", ws, "{store}", e.store, "{other}", otherWS,
		"{file}", filepath.Join(e.ws, "f"), "{prefix}", prefix)
	for _, tc := range badInputs {
		t.Run(tc.name, func(t *testing.T) {
			run := e
			if tc.other {
				run = &env{t: t, ws: other.ws, store: e.store, home: e.home}
			} else {
				run = &env{t: t, ws: e.ws, store: e.store, home: e.home}
			}
			if tc.busy {
				defer run.holdLock()()
			}
			args := make([]string, len(tc.args))
			for i, a := range tc.args {
				args[i] = vars.Replace(a)
			}
			want := vars.Replace(tc.msg)
			text := run.run("", args...)
			line, ok := strings.CutPrefix(text.stderr, "ckpt: ")
			if text.code != tc.code || !ok || strings.Count(line, "\n") != 1 || !matches(strings.TrimSuffix(line, "\n"), want, tc.prefix) {
				t.Errorf("ckpt %q: exit %d, stderr %q; want exit %d and the line %q", args, text.code, text.stderr, tc.code, want)
			}
			js := run.run("", append([]string{"--json"}, args...)...)
			var doc struct {
				Error struct {
					Code    *int    `json:"code"`
					Message *string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(js.stdout), &doc); err != nil || js.code != tc.code || doc.Error.Code == nil ||
				*doc.Error.Code != tc.code || doc.Error.Message == nil || !matches(*doc.Error.Message, want, tc.prefix) {
				t.Errorf("ckpt --json %q: exit %d, stdout %q (%v); want exit %d and error {code %d, message %q}",
					args, js.code, js.stdout, err, tc.code, tc.code, want)
			}
		})
	}
}

func matches(got, want string, prefix bool) bool {
	if prefix {
		return strings.HasPrefix(got, want)
	}
	return got == want
}

// ambiguousPrefix saves empty checkpoints in a task of their own until two
// checkpoint ids share a 4-character prefix, and returns that prefix.
func ambiguousPrefix(t *testing.T, e *env) string {
	t.Helper()
	eng, err := engine.Open(context.Background(), e.ws, engine.Options{StoreDir: e.store})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	seen := map[string]bool{}
	for range 5000 {
		res, err := eng.Save(context.Background(), engine.SaveOptions{Task: "ambiguity", AllowEmpty: true})
		if err != nil {
			t.Fatal(err)
		}
		p := res.ID.String()[:4]
		if seen[p] {
			return p
		}
		seen[p] = true
	}
	t.Fatal("no two of 5000 checkpoint ids share a 4-character prefix")
	return ""
}
