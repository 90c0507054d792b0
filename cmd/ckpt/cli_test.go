package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/testbound"
)

var ckptBin string

// asCLIEnv, set to 1, makes the test binary run as ckpt itself: where no
// Go toolchain can build ckpt (the Windows tests under Wine), the CLI tests
// run a copy of the test binary, which links the whole CLI.
const asCLIEnv = "CKPT_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(asCLIEnv) == "1" {
		main()
	}
	dir, err := os.MkdirTemp("", "ckpt-bin")
	if err != nil {
		panic(err)
	}
	ckptBin = filepath.Join(dir, "ckpt")
	if _, err := exec.LookPath("go"); err != nil {
		ckptBin += filepath.Ext(os.Args[0]) // ckpt.exe on Windows
		if err := copyExecutable(os.Args[0], ckptBin); err != nil {
			panic(fmt.Sprintf("copy the test binary as ckpt: %v", err))
		}
		os.Setenv(asCLIEnv, "1")
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	args := []string{"build", "-tags", "ckpttest", "-o", ckptBin, "."}
	if raceCLI() {
		args = append(args[:1], append([]string{"-race"}, args[1:]...)...)
	}
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		panic(fmt.Sprintf("build ckpt: %v\n%s", err, out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// raceCLI reports whether the ckpt the tests run is built with the race
// detector: with the long tests (CI) only (the tests that drive the
// protocol and the server in this process run under -race either way).
// The detector needs cgo. Without it, `go test -race` builds ckpt's
// dependencies a second time, without -race, once per build cache (a
// clone with a warm cache recompiles only ckpt's own packages, a checkout
// being part of their cache key): a cost a newcomer pays once. With it,
// the build would reuse what `go test -race` compiled (only engine and the
// packages above it differ, by the ckpttest files), but every command the
// tests run costs about three times the CPU: this package's tests took
// 194 s of CPU instead of 60 s, at every run.
func raceCLI() bool {
	if !testbound.LongTests() {
		return false
	}
	cgo, err := exec.Command("go", "env", "CGO_ENABLED").Output()
	return err == nil && strings.TrimSpace(string(cgo)) == "1"
}

// copyExecutable copies the program at src to dst.
func copyExecutable(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o755)
}

// env is a workspace and store for CLI runs.
type env struct {
	t         *testing.T
	ws, store string
	home      string
	// background lets saves start the background recompression (off in
	// other tests, whose stores should not change behind them).
	background bool
	// serverEnv is added to the environment of the servers the test
	// starts (listenServer, stdioServe).
	serverEnv []string
	// clientEnv is added to the environment of the commands run runs.
	clientEnv []string
	// roots, when set, are given as -C each (a multi-root workspace) instead of ws.
	roots []string
}

func newEnv(t *testing.T) *env {
	return &env{t: t, ws: t.TempDir(), store: filepath.Join(t.TempDir(), "store"), home: t.TempDir()}
}

type result struct {
	stdout, stderr string
	code           int
}

// run runs ckpt with -C ws --store store and the given args.
func (e *env) run(stdin string, args ...string) result {
	e.t.Helper()
	return e.runIn("", stdin, args...)
}

// runIn is run from directory dir ("": this process's).
func (e *env) runIn(dir, stdin string, args ...string) result {
	e.t.Helper()
	var out bytes.Buffer
	return e.runTo(dir, stdin, &out, args...)
}

// runTo is runIn with the command's stdout going to stdout (result.stdout
// is what a *bytes.Buffer there holds).
func (e *env) runTo(dir, stdin string, stdout io.Writer, args ...string) result {
	e.t.Helper()
	var errb bytes.Buffer
	cmd := testbound.Start(e.t, func() *exec.Cmd {
		cmd := exec.Command(ckptBin, append(e.flags(), args...)...)
		cmd.Dir = dir
		// USERPROFILE is the home directory on Windows; the data
		// directories (default stores) are under it too, whatever the
		// test's environment says.
		cmd.Env = append(os.Environ(), "HOME="+e.home, "USERPROFILE="+e.home, "CKPT_TASK=", "NO_COLOR=1",
			"XDG_DATA_HOME="+filepath.Join(e.home, ".local", "share"), "LOCALAPPDATA="+filepath.Join(e.home, "AppData", "Local"))
		if !e.background {
			cmd.Env = append(cmd.Env, noBackgroundEnv+"=1")
		}
		cmd.Env = append(cmd.Env, e.clientEnv...)
		cmd.Stdin = strings.NewReader(stdin)
		cmd.Stdout, cmd.Stderr = stdout, &errb
		return cmd
	})
	err := cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	var out string
	if b, ok := stdout.(*bytes.Buffer); ok {
		out = b.String()
	}
	return result{out, errb.String(), code}
}

// flags are -C (each root's, or ws) and --store.
func (e *env) flags() []string {
	if e.roots == nil {
		return []string{"-C", e.ws, "--store", e.store}
	}
	flags := []string{"--store", e.store}
	for _, dir := range e.roots {
		flags = append(flags, "-C", dir)
	}
	return flags
}

func (e *env) ok(args ...string) string {
	e.t.Helper()
	r := e.run("", args...)
	if r.code != 0 {
		e.t.Fatalf("ckpt %v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// read is the content of the workspace's file rel.
func (e *env) read(rel string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.ws, rel))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

func (e *env) write(rel, content string) {
	e.t.Helper()
	p := filepath.Join(e.ws, rel)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func decode[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad JSON %q: %v", s, err)
	}
	return v
}

func TestCLILifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("main.go", "package main\n")
	e.write("docs/a.md", "# a\n")
	first := decode[protocol.SaveJSON](t, e.ok("save", "--json", "-m", "first", "--meta", "tool=write_file"))
	if !first.Created || first.Seq != 1 || first.Stats.Added != 2 || first.Kind != "save" {
		t.Fatalf("first save = %+v", first)
	}
	same := decode[protocol.SaveJSON](t, e.ok("save", "--json"))
	if same.Created || same.ID != first.ID {
		t.Fatalf("no-change save = %+v", same)
	}
	e.write("main.go", "package main\n\nfunc main() {}\n")
	os.Remove(filepath.Join(e.ws, "docs/a.md"))
	if got := e.ok("diff", "--name-status"); got != "M\tmain.go\nD\tdocs/a.md\n" && got != "D\tdocs/a.md\nM\tmain.go\n" {
		t.Fatalf("diff --name-status = %q", got)
	}
	if r := e.run("", "diff", "--exit-code", "--stat"); r.code != 1 || !strings.Contains(r.stdout, "2 files changed") {
		t.Fatalf("diff --exit-code = %d %q", r.code, r.stdout)
	}
	second := decode[protocol.SaveJSON](t, e.ok("save", "--json", "-m", "second"))
	if second.Seq != 2 || second.Parent != first.ID || second.Stats.Modified != 1 || second.Stats.Deleted != 1 {
		t.Fatalf("second save = %+v", second)
	}
	if r := e.run("", "diff", "--exit-code"); r.code != 0 || r.stdout != "" {
		t.Fatalf("diff against an unchanged workspace = %d %q", r.code, r.stdout)
	}
	list := decode[struct {
		Task        string                    `json:"task"`
		Head        string                    `json:"head"`
		Checkpoints []protocol.CheckpointJSON `json:"checkpoints"`
	}](t, e.ok("list", "--json"))
	if list.Task != "default" || list.Head != second.ID || len(list.Checkpoints) != 2 || list.Checkpoints[0].Meta["tool"] != "write_file" {
		t.Fatalf("list = %+v", list)
	}
	if got := e.ok("cat", "@1", "docs/a.md"); got != "# a\n" {
		t.Fatalf("cat = %q", got)
	}
	if got := decode[protocol.CatJSON](t, e.ok("--json", "cat", "@1", "docs/a.md")); got.Path != "docs/a.md" || got.Size != 4 || got.Content == nil || *got.Content != "# a\n" || got.ContentBase64 != nil {
		t.Fatalf("cat --json = %+v", got)
	}
	patch := e.ok("diff", "@1", "@2")
	if !strings.Contains(patch, "diff --git a/main.go b/main.go") || !strings.Contains(patch, "+func main() {}") {
		t.Fatalf("patch:\n%s", patch)
	}
	res := decode[protocol.RestoreJSON](t, e.ok("restore", "@1", "--json"))
	if res.Written != 2 || res.Restored != first.ID || len(res.Conflicts) != 0 {
		t.Fatalf("restore = %+v", res)
	}
	if b, _ := os.ReadFile(filepath.Join(e.ws, "main.go")); string(b) != "package main\n" {
		t.Fatalf("main.go after restore = %q", b)
	}
	if out := e.ok("list"); !strings.Contains(out, "*  @1") {
		t.Fatalf("head marker not on @1:\n%s", out)
	}
}

func TestCLIExitCodes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("f", "x")
	e.ok("save")
	for _, tc := range []struct {
		args []string
		code int
		text string
	}{
		{[]string{"show", "@9"}, 2, "unknown ref"},
		{[]string{"restore", "nope"}, 2, "unknown ref"},
		{[]string{"save", "--bogus"}, 2, "unknown flag"},
		{[]string{"diff", "--mode", "sideways", "@1"}, 2, `--mode "sideways"`},
		{[]string{"cat", "@1", "../etc/passwd"}, 2, "leaves the workspace"},
	} {
		r := e.run("", tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.text) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("ckpt %v: exit %d, stderr %q; want exit %d and one line with %q", tc.args, r.code, r.stderr, tc.code, tc.text)
		}
	}
	r := e.run("", "--json", "show", "@9")
	var doc struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc.Error.Code != 2 || doc.Error.Message == "" {
		t.Errorf("--json error = %q (%v)", r.stdout, err)
	}
	other := &env{t: t, ws: t.TempDir(), store: e.store, home: e.home}
	if r := other.run("", "list"); r.code != 4 || !strings.Contains(r.stderr, "another workspace") {
		t.Errorf("store of another workspace: exit %d %q", r.code, r.stderr)
	}
	home := &env{t: t, ws: e.home, store: filepath.Join(t.TempDir(), "s"), home: e.home}
	if r := home.run("", "save"); r.code != 4 {
		t.Errorf("workspace = home: exit %d %q", r.code, r.stderr)
	}
}

func TestCLIAmbiguousPrefix(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("f", "x")
	eng, err := engine.Open(context.Background(), e.ws, engine.Options{StoreDir: e.store})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	prefix := ""
	for i := 0; i < 5000 && prefix == ""; i++ {
		res, err := eng.Save(context.Background(), engine.SaveOptions{AllowEmpty: true})
		if err != nil {
			t.Fatal(err)
		}
		p := res.ID.String()[:4]
		if seen[p] {
			prefix = p
		}
		seen[p] = true
	}
	eng.Close()
	if prefix == "" {
		t.Fatal("no prefix collision")
	}
	r := e.run("", "show", prefix)
	if r.code != 2 || !strings.Contains(r.stderr, "ambiguous") || strings.Count(r.stderr, prefix) < 3 {
		t.Fatalf("ambiguous prefix: exit %d %q", r.code, r.stderr)
	}
}

func TestCLIConcurrentSavesSerialise(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("f", "base")
	e.ok("save", "-m", "base")
	var wg sync.WaitGroup
	results := make([]result, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = e.run("", "save", "--allow-empty", "--json", "-m", fmt.Sprintf("p%d", i))
		}()
	}
	wg.Wait()
	created := 0
	for i, r := range results {
		switch r.code {
		case 0:
			created++
		case 3:
			if !strings.Contains(r.stdout, "store busy") {
				t.Errorf("process %d: exit 3 without a busy message: %q", i, r.stdout)
			}
		default:
			t.Fatalf("process %d: exit %d %q %q", i, r.code, r.stdout, r.stderr)
		}
	}
	list := decode[struct {
		Checkpoints []protocol.CheckpointJSON `json:"checkpoints"`
	}](t, e.ok("list", "--json"))
	if len(list.Checkpoints) != 1+created {
		t.Fatalf("%d checkpoints after %d successful saves", len(list.Checkpoints), created)
	}
	for i, c := range list.Checkpoints {
		if c.Seq != uint64(i+1) || (i > 0 && c.Parent != list.Checkpoints[i-1].ID) {
			t.Fatalf("chain broken at %d: %+v", i, c)
		}
	}
	e.ok("verify")
}

// saveTwoStates saves @1 (f "v1", state {"turn":1}) and @2 (f "v2",
// state {"turn":2}).
func (e *env) saveTwoStates() {
	e.t.Helper()
	for i, v := range []string{"v1", "v2"} {
		e.write("f", v)
		if r := e.run(fmt.Sprintf(`{"turn":%d}`, i+1), "save", "--state", "-", "-m", []string{"one", "two"}[i]); r.code != 0 {
			e.t.Fatal(r.stderr)
		}
	}
}

func TestCLIStateFlavours(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.saveTwoStates()
	out := filepath.Join(t.TempDir(), "state.json")
	e.ok("restore", "@1", "--only", "state", "--state-out", out)
	if b, _ := os.ReadFile(out); string(b) != `{"turn":1}` {
		t.Fatalf("state-out = %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(e.ws, "f")); string(b) != "v2" {
		t.Fatalf("--only state changed files: %q", b)
	}
	if got := e.ok("restore", "@2", "--only", "both", "--state-out", "-"); !strings.HasPrefix(got, `{"turn":2}`) {
		t.Fatalf("--only both state = %q", got)
	}
	// A FILE that cannot be written fails the restore before it changes
	// anything: no file restored, no backup taken.
	r := e.run("", "restore", "@1", "--only", "both", "--state-out", filepath.Join(t.TempDir(), "missing", "state.json"))
	if r.code != 1 || !strings.Contains(r.stderr, "write state") {
		t.Fatalf("restore with an unwritable --state-out: exit %d %q", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(e.ws, "f")); string(b) != "v2" {
		t.Fatalf("the failed restore changed files: %q", b)
	}
	if list := decode[protocol.LogJSON](t, e.ok("list", "--json")); len(list.Checkpoints) != 2 {
		t.Fatalf("%d checkpoints after the failed restore, want 2 (no backup)", len(list.Checkpoints))
	}
	// A FILE in the workspace is written after the restore, not captured
	// by its backup nor removed by it.
	e.write("f", "v3") // a change, so that the restore takes a backup
	r = e.run("", "restore", "@1", "--json", "--only", "both", "--state-out", filepath.Join(e.ws, "state.json"))
	if b, _ := os.ReadFile(filepath.Join(e.ws, "state.json")); r.code != 0 || string(b) != `{"turn":1}` {
		t.Fatalf("--state-out in the workspace: exit %d %q, state %q", r.code, r.stderr, b)
	}
	backup := decode[protocol.RestoreJSON](t, r.stdout).Backup
	if backup == "" {
		t.Fatalf("the restore took no backup: %s", r.stdout)
	}
	if r := e.run("", "cat", backup, "state.json"); r.code == 0 {
		t.Fatalf("the backup captured the state FILE: %q", r.stdout)
	}
	if got := e.ok("cat", backup, "f"); got != "v3" {
		t.Fatalf("the backup holds f = %q, want v3", got)
	}
}

func TestCLISaveWithFIFO(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("f", "x")
	mkfifo(t, filepath.Join(e.ws, "fifo"))
	res := decode[protocol.SaveJSON](t, e.ok("save", "--json"))
	if len(res.Skipped) != 1 || res.Skipped[0].Path != "fifo" {
		t.Fatalf("skipped = %+v", res.Skipped)
	}
}

// cat --json holds bytes that are not UTF-8 as content_base64, exactly.
func TestCLICatJSONHoldsBytesThatAreNotText(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("latin1.txt", "caf\xe9\n")
	e.ok("save")
	got := decode[protocol.CatJSON](t, e.ok("--json", "cat", "@1", "latin1.txt"))
	if got.Content != nil || got.ContentBase64 == nil || got.Size != 5 {
		t.Fatalf("cat --json of latin-1 = %+v", got)
	}
	if b, err := base64.StdEncoding.DecodeString(*got.ContentBase64); err != nil || string(b) != "caf\xe9\n" {
		t.Fatalf("content_base64 holds %q, %v", b, err)
	}
}

// list prints one row per checkpoint whatever its message holds; show
// prints the message whole.
func TestCLIListShowsOneLinePerCheckpoint(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("a", "1")
	e.ok("save", "-m", "subject\n\nbody line\tand \x1b[2J escape")
	e.write("a", "2")
	e.ok("save", "-m", "caf\xe9")
	out := e.ok("list")
	if lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); len(lines) != 3 ||
		!strings.HasSuffix(lines[1], "subject …") || !strings.HasSuffix(lines[2], "caf\uFFFD") {
		t.Fatalf("list:\n%s", out)
	}
	if out := e.ok("show", "@1"); !strings.Contains(out, "body line\tand") {
		t.Fatalf("show lost the message's body:\n%s", out)
	}
}
