package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
)

// TestCLILogExportBisect runs the history commands cold and through a
// live server: log of a file, export into a directory and a tar archive,
// and a bisect over 60 checkpoints whose 37th breaks a test script.
func TestCLILogExportBisect(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the bisect script is a POSIX shell script")
	}
	e := newEnv(t)
	e.write("test.sh", "grep -q yes ok\n")
	e.write("ok", "yes")
	srv := e.listenServer()
	for i := 1; i <= 60; i++ {
		e.write("n", fmt.Sprint(i))
		if i == 37 {
			e.write("ok", "no")
		}
		e.ok("save", "-q", "-m", fmt.Sprint("step ", i))
	}
	t.Run("server", func(t *testing.T) { checkLogExportBisect(t, e) })
	srv.Process.Kill()
	srv.Wait()
	t.Run("cold", func(t *testing.T) { checkLogExportBisect(t, e) })
}

// checkLogExportBisect runs log, export and bisect on the 60 checkpoints
// of TestCLILogExportBisect.
func checkLogExportBisect(t *testing.T, e *env) {
	h := decode[protocol.HistoryJSON](t, e.ok("--json", "log", "ok"))
	if len(h.Entries) != 2 || h.Entries[0].Checkpoint.Seq != 37 || h.Entries[1].Checkpoint.Seq != 1 {
		t.Fatalf("log ok = %+v, want @37 and @1", h.Entries)
	}
	if c := h.Entries[0].Changes; len(c) != 1 || c[0].Status != "modified" || c[0].Before != 3 || c[0].After != 2 {
		t.Errorf("log ok @37 changes = %+v", c)
	}
	if out := e.ok("log", "-p", "ok"); !strings.Contains(out, "-yes") || !strings.Contains(out, "+no") {
		t.Errorf("log -p shows no patch:\n%s", out)
	}

	out := filepath.Join(t.TempDir(), "at12")
	e.ok("export", "@12", out)
	if b, err := os.ReadFile(filepath.Join(out, "n")); err != nil || string(b) != "12" {
		t.Errorf("exported n = %q, %v", b, err)
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
	if b.FirstBad.Seq != 37 || b.FirstBad.Message != "step 37" {
		t.Errorf("bisect found @%d %q, want @37", b.FirstBad.Seq, b.FirstBad.Message)
	}
	if len(b.Steps) > 6 {
		t.Errorf("bisect ran %d tests, want at most ceil(log2(59)) = 6", len(b.Steps))
	}
	if e.ok("diff", "--name-status", "HEAD", "workspace") != wsBefore {
		t.Error("bisect changed the workspace")
	}
	if r := e.run("", "bisect"); r.code != 2 {
		t.Errorf("bisect without --run: exit %d, want 2", r.code)
	}
}
