package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/cmd/ckpt/server"
	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/cmdwire"
	"github.com/ckpt/ckpt/internal/localsock"
	"github.com/ckpt/ckpt/internal/testbound"
)

// listenServer starts `ckpt serve --listen` with extra flags and returns
// once it listens.
func (e *env) listenServer(flags ...string) *exec.Cmd {
	e.t.Helper()
	var out io.ReadCloser
	cmd := testbound.Start(e.t, func() *exec.Cmd {
		cmd := exec.Command(ckptBin, append(append(e.flags(), "serve", "--listen"), flags...)...)
		cmd.Env = append(append(os.Environ(), "HOME="+e.home, "CKPT_TASK="), e.serverEnv...)
		out = stdoutPipe(e.t, cmd)
		return cmd
	})
	e.t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if want := "listening on " + localsock.Endpoint(e.store) + "\n"; err != nil || line != want {
		e.t.Fatalf("server said %q (%v), want %q", line, err, want)
	}
	return cmd
}

// While a server holds the store (and its lock), commands of other
// processes run through it: with --lock-timeout 0 any of them that opened
// the store itself would exit 3.
func TestCommandsRunThroughListeningServer(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "one\n")
	srv := e.listenServer()
	checkEndpointIsPrivate(t, localsock.Endpoint(e.store))
	first := decode[protocol.SaveJSON](t, e.ok("--lock-timeout", "0", "save", "--json", "-m", "one"))
	if !first.Created || first.Seq != 1 {
		t.Fatalf("save through the server = %+v", first)
	}
	if out := e.ok("--lock-timeout", "0", "list"); !strings.Contains(out, "one") {
		t.Fatalf("list through the server = %q", out)
	}
	e.write("a.txt", "two\n")
	if got := e.ok("--lock-timeout", "0", "diff", "--name-status"); got != "M\ta.txt\n" {
		t.Fatalf("diff through the server = %q", got)
	}
	if r := e.run("", "--lock-timeout", "0", "diff", "--exit-code", "--stat"); r.code != 1 {
		t.Fatalf("diff --exit-code through the server = %d %q %q", r.code, r.stdout, r.stderr)
	}
	e.ok("--lock-timeout", "0", "restore", "HEAD")
	if b, _ := os.ReadFile(filepath.Join(e.ws, "a.txt")); string(b) != "one\n" {
		t.Fatalf("a.txt after restore through the server = %q", b)
	}
	served := e.run("", "--lock-timeout", "0", "restore", "@9")
	stopServer(t, srv, e.store)
	local := e.run("", "--lock-timeout", "0", "restore", "@9")
	if served != local || local.code != protocol.ExitUsage {
		t.Fatalf("restore @9 through the server = %+v, without = %+v; want the same usage error", served, local)
	}
}

// An endpoint left by a server that died is removed by the next command,
// which then opens the store itself.
func TestStaleEndpointIsIgnoredAndRemoved(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "one\n")
	srv := e.listenServer()
	srv.Process.Kill()
	srv.Wait()
	endpoint := localsock.Endpoint(e.store)
	if _, err := os.Lstat(endpoint); err != nil {
		t.Fatalf("a killed server left no endpoint (%v); the test no longer tests a stale one", err)
	}
	e.ok("--lock-timeout", "0", "save")
	if _, err := os.Lstat(endpoint); !os.IsNotExist(err) {
		t.Fatalf("stale endpoint still there: %v", err)
	}
}

// A command that finds no server and waits for the store's lock is run by
// the server that holds the lock and comes to listen meanwhile (as `serve
// --listen` does once it has opened the store), instead of failing busy at
// --lock-timeout: it looks for the server again between slices of its wait.
func TestWaitingCommandIsRunByAServerThatStartsListening(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "one\n")
	e.ok("save", "-m", "first")
	eng, err := engine.Open(context.Background(), e.ws, engine.Options{StoreDir: e.store, Command: "ckpt serve"})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	var out, stderr bytes.Buffer
	cmd := exec.Command(ckptBin, append(e.flags(), "--lock-timeout", "20s", "list")...)
	cmd.Env = append(os.Environ(), "HOME="+e.home, "CKPT_TASK=", "NO_COLOR=1", noBackgroundEnv+"=1")
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	testbound.Until(t, "the list waits for the lock", eng.Awaited)
	ctx, cancel := context.WithCancel(context.Background())
	listened := make(chan error, 1)
	go func() {
		listened <- server.Listen(ctx, server.Config{StoreDir: e.store,
			Run: func(_ context.Context, _ cmdwire.Request, _ io.Reader, stdout, _ io.Writer) int {
				fmt.Fprint(stdout, "run by the server")
				return 0
			}})
	}()
	defer func() { cancel(); <-listened }()
	if werr := cmd.Wait(); werr != nil || out.String() != "run by the server" {
		t.Fatalf("list: %v, stdout %q, stderr %q; want it run by the server", werr, out.String(), stderr.String())
	}
}

// A command's whole wait for its store, for the lock and then for a server
// that came to listen meanwhile to accept it (or answer its attach), ends
// --lock-timeout (at least minServerAnswer) after it began, however late
// the server came: the wait for the accept is not a second --lock-timeout
// counted from the server's arrival. The server here takes connections
// and never answers (stopped, or stuck); it comes well into the wait.
func TestAServerFoundLateGetsOnlyWhatIsLeftOfTheWait(t *testing.T) {
	const lockTimeout = 4 * time.Second
	for _, args := range [][]string{{"list"}, {"serve"}} {
		t.Run(args[0], func(t *testing.T) {
			e := newEnv(t)
			e.ok("save")
			eng, err := engine.Open(context.Background(), e.ws, engine.Options{StoreDir: e.store, Command: "ckpt serve"})
			if err != nil {
				t.Fatal(err)
			}
			defer eng.Close()
			client, _, stderr := e.start(strings.NewReader(""), append([]string{"--lock-timeout", lockTimeout.String()}, args...)...)
			testbound.Until(t, "the client waits for the lock", eng.Awaited)
			waiting := time.Now() // the client's wait began a moment before
			// The server comes three quarters into the wait: when it comes
			// is the scenario, not a synchronisation (the bound holds
			// whenever it comes).
			time.Sleep(time.Until(waiting.Add(3 * lockTimeout / 4)))
			ln, err := localsock.Listen(e.store)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			reached := make(chan time.Time, 1)
			go func() {
				for {
					conn, err := ln.Accept()
					if err != nil {
						return
					}
					defer conn.Close() // held unanswered until the test ends
					select {
					case reached <- time.Now():
					default:
					}
				}
			}()
			code, _ := waitExit(t, client)
			waited := time.Since(waiting)
			if code != protocol.ExitBusy || !strings.Contains(stderr.String(), "did not answer") {
				t.Fatalf("%v with a server that never answers: exit %d, stderr %q; want %d saying it did not answer", args, code, stderr.String(), protocol.ExitBusy)
			}
			select {
			case at := <-reached:
				if at.Sub(waiting) < lockTimeout/2 {
					t.Fatalf("the client reached the server %v into its wait; the test means it to come late", at.Sub(waiting))
				}
			default:
				t.Fatal("the client failed busy without reaching the server")
			}
			if slack := 1500 * time.Millisecond; waited > lockTimeout+slack {
				t.Fatalf("%v waited %v for the store in all; want --lock-timeout %v (and %v of slack)", args, waited, lockTimeout, slack)
			}
		})
	}
}

// A server with --idle stops by itself once no client has come for that long.
// The idle time is longer than a client process takes to start under Wine
// (where 300 ms let the server expire just as the client's connection
// arrived, which that client reports as an error: see the note).
func TestListeningServerStopsWhenIdle(t *testing.T) {
	e := newEnv(t)
	srv := e.listenServer("--idle", "2s")
	e.ok("list")
	done := make(chan error, 1)
	go func() { done <- srv.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("idle server: %v", err)
		}
		if _, err := os.Lstat(localsock.Endpoint(e.store)); !os.IsNotExist(err) {
			t.Fatalf("endpoint left after the server stopped: %v", err)
		}
	case <-time.After(testbound.Hang):
		t.Fatal("idle server still running")
	}
}

// A forwarded command shapes its output for the client's terminal, as the
// same command run locally would: one JSON line for a program, indented
// JSON for a person.
func TestForwardedOutputFollowsTheClientsTerminal(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "one\n")
	e.listenServer()
	if got := e.ok("save", "--json"); strings.Count(got, "\n") != 1 || !strings.HasPrefix(got, "{") {
		t.Fatalf("save --json off a terminal = %q; want one line", got)
	}
	for _, terminal := range []bool{false, true} {
		conn, err := localsock.Dial(e.store)
		if err != nil {
			t.Fatal(err)
		}
		var out, errOut strings.Builder
		code, err := cmdwire.Exchange(conn, cmdwire.Request{Args: []string{"--store", e.store, "-C", e.ws, "list", "--json"},
			Cwd: e.ws, Terminal: terminal}, time.Time{}, &out, &errOut)
		conn.Close()
		if err != nil || code != 0 {
			t.Fatalf("list through the server: %d, %v, %s", code, err, errOut.String())
		}
		if indented := strings.Contains(out.String(), "\n  "); indented != terminal {
			t.Fatalf("terminal %v: output %q", terminal, out.String())
		}
	}
}

// A command for another workspace than the store's is refused with the
// store's own refusal (exit 4, both workspaces named) whether or not a
// server holds the store; one that asks for other capture options than the
// server's runs under them, capturing, comparing and restoring what it
// does cold (the timeline page alone is told which options differ).
func TestServerRefusesAnotherWorkspaceAsTheStoreDoes(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "one\n")
	e.ok("save")
	other := &env{t: t, ws: t.TempDir(), store: e.store, home: e.home}
	cold := other.run("", "--lock-timeout", "0", "save")
	e.listenServer()
	served := other.run("", "--lock-timeout", "0", "save")
	for _, r := range []result{cold, served} {
		if r.code != protocol.ExitRefused || !strings.Contains(r.stderr, "records workspace") || !strings.Contains(r.stderr, other.ws) {
			t.Fatalf("save of another workspace: cold %+v, through the server %+v; want exit 4 naming %s", cold, served, other.ws)
		}
	}
	e.write("b.x", "x\n")
	e.write("big.bin", strings.Repeat("b", 2<<10))
	other.ws = e.ws
	other.store = filepath.Join(t.TempDir(), "cold") // the same commands cold, in a store of their own
	// Each global flag that differs from the server's applies; the server's
	// own (--profile default) changes nothing.
	flags := []string{"--lock-timeout", "0", "--profile", "default", "--exclude", "*.x", "--max-file-size", "1KiB", "--task", "other"}
	for _, env := range []*env{e, other} {
		env.ok(append(flags, "save", "-m", "other rules")...)
	}
	e.write("a.txt", "two\n")
	e.write("b.x", "y\n")
	for _, args := range [][]string{{"ls", "@1"}, {"diff"}, {"diff", "@1", "workspace"}, {"diff", "--stat", "@1", "workspace"}, {"restore", "@1", "--dry-run"}} {
		served, cold := e.run("", append(flags, args...)...), other.run("", append(flags, args...)...)
		ids := regexp.MustCompile(`\b[0-9a-f]{12}\b`) // the two stores' checkpoints differ in their times
		if served.code != 0 || ids.ReplaceAllString(served.stdout, "ID") != ids.ReplaceAllString(cold.stdout, "ID") || strings.Contains(served.stdout, "b.x") || strings.Contains(served.stdout, "big.bin") {
			t.Fatalf("%v under other options: through the server exit %d %q %q, cold %q; want the cold output, without b.x and big.bin", args, served.code, served.stdout, served.stderr, cold.stdout)
		}
	}
	if r := e.run("", "--lock-timeout", "0", "--exclude", "*.x", "ui"); r.code != protocol.ExitUsage || !strings.Contains(r.stderr, "--exclude") {
		t.Fatalf("ui with another --exclude through the server: exit %d %q; want exit 2", r.code, r.stderr)
	}
	// A command that reads only the store does not depend on the options
	// and runs, as it does cold.
	for _, args := range [][]string{{"list"}, {"show", "@1"}, {"cat", "@1", "a.txt"}, {"ls", "@1"}, {"stats"}, {"diff", "@1", "@1"}, {"restore", "@1", "--only", "state", "--state-out", "-"}} {
		if r := e.run("", append([]string{"--lock-timeout", "0", "--exclude", "*.x", "--profile", "roo"}, args...)...); r.code != 0 {
			t.Fatalf("%v with other capture options through the server: exit %d %q", args, r.code, r.stderr)
		}
	}
}
