package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/cmd/ckpt/protocol/protocoltest"
	"github.com/ckpt/ckpt/internal/testbound"
)

// interruptDirs and interruptFilesPerDir are the size of the workspaces whose restore the tests
// interrupt: ten directories of thirty files.
const interruptDirs, interruptFilesPerDir = 10, 30

// twoVersions saves @1 (every file "v1"), which it returns, and @2 (every
// file "v2", and a directory @1 lacks), so that a restore of @1 rewrites
// and removes.
func (e *env) twoVersions() protocol.SaveJSON {
	e.t.Helper()
	write := func(v string) {
		for d := range interruptDirs {
			for f := range interruptFilesPerDir {
				e.write(fmt.Sprintf("d%02d/f%02d", d, f), fmt.Sprintf("%s %d %d\n", v, d, f))
			}
		}
	}
	write("v1")
	one := decode[protocol.SaveJSON](e.t, e.ok("save", "--json", "-m", "v1"))
	write("v2")
	e.write("new/only-in-v2", "v2\n")
	e.ok("save", "-m", "v2")
	return one
}

// readWorkspace maps each file of e's workspace to its content.
func (e *env) readWorkspace() map[string]string {
	e.t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(e.ws, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(e.ws, p)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return files
}

// interruptedRestore is a server whose restore of @1 was interrupted
// after its journal was written: save saves through that server (and
// reports the restore it settled first), stop stops it.
type interruptedRestore struct {
	one  protocol.SaveJSON
	save func(message string) protocol.SaveJSON
	stop func()
}

// checkNeverReplayed goes on from an interrupted restore as the user in
// the report did: through the same server a save, an edit and a save;
// then the server stops and a plain save runs without it. The first save
// must complete the restore (and say so); the edit and the head after it
// must survive the server's end and the cold save: the journal is never
// replayed over them.
func (e *env) checkNeverReplayed(r interruptedRestore) {
	e.t.Helper()
	var list struct {
		Pending *struct{} `json:"pending_restore"`
	}
	if err := json.Unmarshal([]byte(e.ok("--lock-timeout", "0", "list", "--json")), &list); err != nil || list.Pending == nil {
		e.t.Fatalf("no restore pending after the interruption (%v); the test interrupts nothing", err)
	}
	first := r.save("after the interrupted restore")
	if first.CompletedRestore == nil || first.CompletedRestore.Restored != r.one.ID {
		e.t.Fatalf("the first save through the server settled %+v, want the restore to @1 completed", first.SettledJSON)
	}
	if first.ID != r.one.ID || first.Created {
		e.t.Fatalf("the first save after completion = %+v; want no change at @1", first)
	}
	e.write("d03/f09", "newer work\n")
	edited := r.save("the edit")
	if !edited.Created || edited.CompletedRestore != nil || edited.DiscardedRestore != nil {
		e.t.Fatalf("the save of the edit = %+v", edited)
	}
	want := e.readWorkspace()
	r.stop()
	cold := e.run("", "--lock-timeout", "0", "save", "--json")
	if cold.code != 0 || strings.Contains(cold.stdout, "_restore") || strings.Contains(cold.stderr, "interrupted restore") {
		e.t.Fatalf("the cold save after the server: exit %d\n%s%s", cold.code, cold.stdout, cold.stderr)
	}
	if got := decode[protocol.SaveJSON](e.t, cold.stdout); got.ID != edited.ID || got.Created {
		e.t.Fatalf("the cold save moved the head to %s (created %v); want it at the edit's %s", got.ID, got.Created, edited.ID)
	}
	got := e.readWorkspace()
	if got["d03/f09"] != "newer work\n" || len(got) != len(want) {
		e.t.Fatalf("after the cold save d03/f09 = %q and %d files; want the edit and %d files", got["d03/f09"], len(got), len(want))
	}
	for p, c := range want {
		if got[p] != c {
			e.t.Fatalf("%s = %q after the cold save, want %q", p, got[p], c)
		}
	}
}

// A restore through the listening server, interrupted by SIGINT to the
// client once its journal exists (exit 130), is completed by the server's
// next save and never replayed later over newer saved work.
func TestInterruptedRestoreThroughTheServerIsNeverReplayed(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no SIGINT to send to the client")
	}
	e := newEnv(t)
	one := e.twoVersions()
	paused := e.pauseServersAt("restore-journaled")
	srv := e.listenServer()
	client, _, stderr := e.start(strings.NewReader(""), "--lock-timeout", "0", "restore", "@1")
	paused()
	if err := client.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code, _ := waitExit(t, client); code != 130 || !strings.Contains(stderr.String(), "interrupted by SIGINT") {
		t.Fatalf("the interrupted client: exit %d, stderr %q; want 130", code, stderr.String())
	}
	e.checkNeverReplayed(interruptedRestore{one: one,
		save: func(m string) protocol.SaveJSON {
			return decode[protocol.SaveJSON](t, e.ok("--lock-timeout", "0", "save", "--json", "-m", m))
		},
		stop: func() { stopServer(t, srv, e.store) }})
}

// A restore a host cancels with $/cancelRequest on a stdio serve is
// completed by that serve's next save, which says so in its result and a
// restore event, and never replayed later over newer saved work. The
// cancellation, which leaves the restore pending, is told to the task's
// clients as an error event.
func TestCancelledStdioRestoreIsNeverReplayed(t *testing.T) {
	e := newEnv(t)
	one := e.twoVersions()
	paused := e.pauseServersAt("restore-journaled")
	_, host, end := e.stdioServe()
	host.Send(`{"jsonrpc":"2.0","id":"r","method":"restore","params":{"ref":"@1"}}`)
	paused()
	host.Send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"r"}}`)
	told := false
	for {
		m := host.Next()
		told = told || m.Method == "error" && strings.Contains(string(m.Params), "pending")
		if string(m.ID) != `"r"` {
			continue
		}
		if !told {
			t.Fatal("the restore cancelled part way sent no error event saying it is pending")
		}
		if m.Error == nil || !strings.Contains(m.Error.Message, "cancel") {
			t.Fatalf("the cancelled restore answered %s %+v; want a cancellation", m.Result, m.Error)
		}
		break
	}
	e.checkNeverReplayed(interruptedRestore{one: one,
		save: func(m string) protocol.SaveJSON {
			var res protocol.SaveJSON
			events := host.OK("save", map[string]any{"message": m}, &res)
			if res.CompletedRestore != nil && !hasRestoreEvent(events, one.ID) {
				t.Fatalf("the save that completed the restore sent %+v; want a restore event for @1", events)
			}
			return res
		},
		stop: end})
}

// hasRestoreEvent reports whether events hold a restore event of commit.
func hasRestoreEvent(events []protocoltest.Message, commit string) bool {
	for _, m := range events {
		var ev protocol.RestoreEvent
		if m.Method == "restore" && json.Unmarshal(m.Params, &ev) == nil && ev.CommitHash == commit {
			return true
		}
	}
	return false
}

// A save its host cancels before it records anything sends the host its
// answer and the task's clients no error event: a cancellation the user
// asked for is no failure to show.
func TestCancelledStdioSaveSendsNoErrorEvent(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "one\n")
	paused := e.pauseServersAt("save-scanned")
	_, host, _ := e.stdioServe()
	host.Send(`{"jsonrpc":"2.0","id":"s","method":"save","params":{}}`)
	paused()
	host.Send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"s"}}`)
	for {
		m := host.Next()
		if m.Method == "error" {
			t.Fatalf("the cancelled save sent an error event %s", m.Params)
		}
		if string(m.ID) != `"s"` {
			continue
		}
		if m.Error == nil || !strings.Contains(m.Error.Message, "cancel") {
			t.Fatalf("the cancelled save answered %s %+v; want a cancellation", m.Result, m.Error)
		}
		return
	}
}

// A dry run changes nothing, not even by completing a restore that was
// interrupted: it says the restore is pending, as the reading commands do,
// and the next writing command completes it.
func TestCLIDryRunLeavesAnInterruptedRestorePending(t *testing.T) {
	if os.Getenv(asCLIEnv) == "1" && testOptions == nil {
		t.Skip("ckpt is this test binary here (Windows under Wine), built without the ckpttest tag that holds the pause")
	}
	e := newEnv(t)
	one := e.twoVersions()
	marker := filepath.Join(t.TempDir(), "paused")
	t.Setenv("CKPT_TEST_PAUSE", "restore-journaled:"+marker)
	cmd, _, _ := e.start(strings.NewReader(""), "restore", "@1")
	testbound.Until(t, "the restore pauses with its journal written", func() bool { _, err := os.Stat(marker); return err == nil })
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	t.Setenv("CKPT_TEST_PAUSE", "")
	before := e.readWorkspace()
	r := e.run("", "restore", "--dry-run", "@2")
	if r.code != 0 || !strings.Contains(r.stderr, "was interrupted") || strings.Contains(r.stderr, "completed an interrupted restore") {
		t.Fatalf("restore --dry-run with a restore pending: exit %d\n%s", r.code, r.stderr)
	}
	if after := e.readWorkspace(); len(after) != len(before) || after["d00/f00"] != before["d00/f00"] || after["new/only-in-v2"] != before["new/only-in-v2"] {
		t.Fatalf("the dry run changed the workspace: %d files before, %d after", len(before), len(after))
	}
	var list struct {
		Pending *struct{} `json:"pending_restore"`
	}
	if err := json.Unmarshal([]byte(e.ok("list", "--json")), &list); err != nil || list.Pending == nil {
		t.Fatalf("no restore pending after the dry run (%v)", err)
	}
	if saved := decode[protocol.SaveJSON](t, e.ok("save", "--json")); saved.CompletedRestore == nil || saved.CompletedRestore.Restored != one.ID {
		t.Fatalf("the save after the dry run settled %+v; want the restore to @1 completed", saved.SettledJSON)
	}
}

// A restore the user interrupts once its journal is written (SIGINT,
// exit 130) says, on its one line, that it left the workspace part way and
// which command completes it, as a restore a full disk stops does; it
// said only "interrupted by SIGINT". A command interrupted with no
// restore pending says only that.
func TestCLIInterruptedRestoreSaysItIsPending(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no SIGINT to send to the command")
	}
	if os.Getenv(asCLIEnv) == "1" && testOptions == nil {
		t.Skip("ckpt is this test binary here, built without the ckpttest tag that holds the pause")
	}
	e := newEnv(t)
	one := e.twoVersions()
	interrupt := func(point string, args ...string) (int, string) {
		t.Helper()
		marker := filepath.Join(t.TempDir(), "paused")
		t.Setenv("CKPT_TEST_PAUSE", point+":"+marker)
		cmd, _, stderr := e.start(strings.NewReader(""), args...)
		testbound.Until(t, "the command pauses at "+point, func() bool { _, err := os.Stat(marker); return err == nil })
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		code, _ := waitExit(t, cmd)
		t.Setenv("CKPT_TEST_PAUSE", "")
		return code, stderr.String()
	}
	code, stderr := interrupt("restore-journaled", "restore", "@1")
	if code != 130 || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "ckpt: interrupted by SIGINT; ") ||
		!strings.Contains(stderr, "restore to "+one.ID[:12]) || !strings.Contains(stderr, "part way") ||
		!strings.Contains(stderr, "the next command that may write (save, restore, gc, drop) completes it") {
		t.Fatalf("the interrupted restore: exit %d, stderr %q; want exit 130 and one line saying the restore is pending", code, stderr)
	}
	if saved := decode[protocol.SaveJSON](t, e.ok("save", "--json")); saved.CompletedRestore == nil || saved.CompletedRestore.Restored != one.ID {
		t.Fatalf("the save after the interruption settled %+v; want the restore to @1 completed", saved.SettledJSON)
	}
	e.write("d00/f00", "an edit\n")
	if code, stderr := interrupt("save-scanned", "save"); code != 130 || stderr != "ckpt: interrupted by SIGINT\n" {
		t.Fatalf("the interrupted save: exit %d, stderr %q; want exit 130 and only the interruption", code, stderr)
	}
}
