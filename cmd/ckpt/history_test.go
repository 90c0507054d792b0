package main

import (
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/internal/testbound"
)

// TestCLILogExportBisect runs the history commands cold and through a
// live server: log of a file, export into a directory and a tar archive,
// and a bisect over 24 checkpoints (60 with the long tests) whose 14th
// (37th) breaks a test script.
func TestCLILogExportBisect(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the bisect script is a POSIX shell script")
	}
	e := newEnv(t)
	e.write("test.sh", "grep -q yes ok\n")
	e.write("ok", "yes")
	srv := e.listenServer()
	n := testbound.Scale(24, 60)
	bad := n * 37 / 60
	for i := 1; i <= n; i++ {
		e.write("n", fmt.Sprint(i))
		if i == bad {
			e.write("ok", "no")
		}
		e.ok("save", "-q", "-m", fmt.Sprint("step ", i))
	}
	t.Run("server", func(t *testing.T) { checkLogExportBisect(t, e, n, bad) })
	srv.Process.Kill()
	srv.Wait()
	t.Run("cold", func(t *testing.T) { checkLogExportBisect(t, e, n, bad) })
}

// checkLogExportBisect runs log, export and bisect on the n checkpoints
// of TestCLILogExportBisect, whose bad-th breaks the test script.
func checkLogExportBisect(t *testing.T, e *env, n, bad int) {
	h := decode[protocol.HistoryJSON](t, e.ok("--json", "log", "ok"))
	if len(h.Entries) != 2 || h.Entries[0].Checkpoint.Seq != uint64(bad) || h.Entries[1].Checkpoint.Seq != 1 {
		t.Fatalf("log ok = %+v, want @%d and @1", h.Entries, bad)
	}
	if c := h.Entries[0].Changes; len(c) != 1 || c[0].Status != "modified" || c[0].Before != 3 || c[0].After != 2 {
		t.Errorf("log ok @%d changes = %+v", bad, c)
	}
	if out := e.ok("log", "-p", "ok"); !strings.Contains(out, "-yes") || !strings.Contains(out, "+no") {
		t.Errorf("log -p shows no patch:\n%s", out)
	}

	parent := t.TempDir()
	out := filepath.Join(parent, "a", "at12")
	e.ok("export", "@12", out)
	if b, err := os.ReadFile(filepath.Join(out, "n")); err != nil || string(b) != "12" {
		t.Errorf("exported n = %q, %v", b, err)
	}
	// The directories export made have the user's umask, not the 077
	// ckpt keeps its store with: this process's, as a directory it makes
	// shows.
	ref := filepath.Join(parent, "ref")
	if err := os.Mkdir(ref, 0o777); err != nil {
		t.Fatal(err)
	}
	want, _ := os.Stat(ref)
	for _, dir := range []string{filepath.Dir(out), out} {
		if fi, err := os.Stat(dir); runtime.GOOS != "windows" && (err != nil || fi.Mode().Perm() != want.Mode().Perm()) {
			t.Errorf("%s, which export made: %v, %v; want %v", dir, fi.Mode(), err, want.Mode())
		}
	}
	if r := e.run("", "export", "@12", out); r.code != 2 {
		t.Errorf("export into a full directory: exit %d, want 2\n%s", r.code, r.stderr)
	}
	tarFile := filepath.Join(t.TempDir(), "at12.tar")
	e.ok("export", "@12", "--tar", tarFile, "--", "n")
	if st, err := os.Stat(tarFile); err != nil || st.Size() == 0 {
		t.Errorf("tar archive: %v", err)
	}

	wsBefore := e.ok("diff", "--name-status", "HEAD", "workspace")
	b := decode[protocol.BisectJSON](t, e.ok("--json", "bisect", "--run", "sh test.sh"))
	if b.FirstBad.Seq != uint64(bad) || b.FirstBad.Message != fmt.Sprint("step ", bad) {
		t.Errorf("bisect found @%d %q, want @%d", b.FirstBad.Seq, b.FirstBad.Message, bad)
	}
	// The first checkpoint is good and the last bad: n-1 candidates,
	// after a test of each end, left to its default.
	if most := bits.Len(uint(n-2)) + 2; len(b.Steps) > most {
		t.Errorf("bisect ran %d tests, want at most ceil(log2(%d)) + 2 = %d", len(b.Steps), n-1, most)
	}
	if e.ok("diff", "--name-status", "HEAD", "workspace") != wsBefore {
		t.Error("bisect changed the workspace")
	}
	if r := e.run("", "bisect"); r.code != 2 {
		t.Errorf("bisect without --run: exit %d, want 2", r.code)
	}
}
