package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/localsock"
	"github.com/ckpt/ckpt/internal/testbound"
)

// signalDeadline is how soon a signalled command must exit: half the 60 s
// lock timeout the waiting commands are given, so that an exit on the
// signal is told from one on the timeout, however loaded the machine.
const signalDeadline = 30 * time.Second

// start starts ckpt on e's workspace and store without waiting for it.
func (e *env) start(stdin io.Reader, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	e.t.Helper()
	var out, errb bytes.Buffer
	cmd := testbound.Start(e.t, func() *exec.Cmd {
		cmd := exec.Command(ckptBin, append([]string{"-C", e.ws, "--store", e.store}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+e.home, "CKPT_TASK=", "NO_COLOR=1")
		cmd.Stdin = stdin
		cmd.Stdout, cmd.Stderr = &out, &errb
		return cmd
	})
	return cmd, &out, &errb
}

// lockHolder is the command holdLock's engine records as the store's
// holder.
const lockHolder = "ckpt save"

// holdLock opens the store in this process, as a plain command would: it
// holds the store's lock, serving no client, until the test ends or
// release is called. (serve and mcp would serve the store to every later
// command instead.)
func (e *env) holdLock() (release func()) {
	e.t.Helper()
	eng, err := engine.Open(context.Background(), e.ws, engine.Options{StoreDir: e.store, Command: lockHolder})
	if err != nil {
		e.t.Fatal(err)
	}
	release = sync.OnceFunc(func() { eng.Close() })
	e.t.Cleanup(release)
	return release
}

// waitForLockFile returns once process pid has the store's lock file open:
// it is then waiting for the lock (its signal handler is installed before).
func waitForLockFile(t *testing.T, pid int, lock string) {
	t.Helper()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(testbound.Hang)
	fdDir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	for {
		ents, _ := os.ReadDir(fdDir)
		for _, ent := range ents {
			if target, err := os.Readlink(filepath.Join(fdDir, ent.Name())); err == nil && target == lock {
				return
			}
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("process %d never opened %s", pid, lock)
		}
	}
}

// TestSignalStopsEveryCommandWaitingForTheLock holds the store lock in one
// process, starts every command in another with a 60 s lock timeout, signals
// it while it waits, and requires exit 143 (SIGTERM), 130 (SIGINT) or 129 (SIGHUP) within
// a few seconds; a serve that owns the store, idle on stdin, stops the same
// way and removes its endpoint, and the store verifies afterwards.
func TestSignalStopsEveryCommandWaitingForTheLock(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows has neither SIGTERM to send nor /proc to see a process wait for the lock")
	}
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("needs /proc to see that a process waits for the lock")
	}
	e := newEnv(t)
	e.write("f", "one")
	e.ok("save", "-m", "one")
	release := e.holdLock()
	lock, err := filepath.EvalSymlinks(filepath.Join(e.store, "lock"))
	if err != nil {
		t.Fatal(err)
	}
	commands := [][]string{{"save"}, {"list"}, {"show", "@1"}, {"ls", "@1"}, {"cat", "@1", "f"}, {"diff"},
		{"restore", "@1"}, {"tasks"}, {"drop", "default"}, {"gc"}, {"verify"}, {"stats"}, {"serve"}, {"mcp"}}
	// Those the tests started with ignored (nohup, a background job) the
	// commands keep ignored, as they should.
	sigs := slices.DeleteFunc([]syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP}, func(s syscall.Signal) bool { return signal.Ignored(s) })
	for i, args := range commands {
		sig := sigs[i%len(sigs)]
		cmd, _, stderr := e.start(strings.NewReader(""), append([]string{"--lock-timeout", "60s"}, args...)...)
		waitForLockFile(t, cmd.Process.Pid, lock)
		sent := time.Now()
		cmd.Process.Signal(sig)
		code, took := waitExit(t, cmd)
		if want := 128 + int(sig); code != want || took > signalDeadline ||
			!strings.Contains(stderr.String(), "interrupted by "+signalName(sig)) {
			t.Errorf("ckpt %v, %v while waiting for the lock: exit %d after %v, stderr %q; want exit %d at once",
				args, sig, code, time.Since(sent), stderr.String(), want)
		}
	}
	release()
	idle, open, err := os.Pipe() // stdin that stays open
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	owner, _, _ := e.start(idle, "--lock-timeout", "0", "serve")
	idle.Close()
	endpoint := localsock.Endpoint(e.store)
	testbound.Until(t, "the serve owning the store listens", func() bool { _, err := os.Lstat(endpoint); return err == nil })
	owner.Process.Signal(syscall.SIGTERM)
	if code, took := waitExit(t, owner); code != 143 || took > signalDeadline {
		t.Errorf("serve idle on stdin, SIGTERM: exit %d after %v; want 143 at once", code, took)
	}
	if _, err := os.Lstat(endpoint); !os.IsNotExist(err) {
		t.Errorf("endpoint after the owning serve was signalled: %v", err)
	}
	e.ok("verify")
	if out := e.ok("list"); strings.Count(out, "@") != 1 {
		t.Errorf("after the signalled commands:\n%s", out)
	}
}

// A command started with a termination signal ignored keeps it ignored:
// SIGHUP under nohup, SIGINT in a background job of a shell. Such a signal
// sent before a SIGTERM (pending signals are delivered lowest number
// first) is not what stops it.
func TestSignalsIgnoredAtStartStayIgnored(t *testing.T) {
	nohup, err := exec.LookPath("nohup")
	if err != nil || runtime.GOOS == "windows" {
		t.Skip("needs nohup, sh and SIGHUP")
	}
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("needs /proc to see that a process waits for the lock")
	}
	e := newEnv(t)
	e.write("f", "one")
	e.ok("save")
	e.holdLock()
	lock, err := filepath.EvalSymlinks(filepath.Join(e.store, "lock"))
	if err != nil {
		t.Fatal(err)
	}
	args := []string{ckptBin, "-C", e.ws, "--store", e.store, "--lock-timeout", "60s", "save"}
	for _, tc := range []struct {
		name    string
		ignored syscall.Signal
		argv    []string
	}{
		{"nohup", syscall.SIGHUP, append([]string{nohup}, args...)},
		{"a background job", syscall.SIGINT, append([]string{"/bin/sh", "-c", `trap "" INT; exec "$@"`, "sh"}, args...)},
	} {
		var errb bytes.Buffer
		cmd := testbound.Start(t, func() *exec.Cmd {
			cmd := exec.Command(tc.argv[0], tc.argv[1:]...)
			cmd.Env = append(os.Environ(), "HOME="+e.home, "CKPT_TASK=")
			cmd.Stderr = &errb
			return cmd
		})
		waitForLockFile(t, cmd.Process.Pid, lock)
		cmd.Process.Signal(tc.ignored)
		cmd.Process.Signal(syscall.SIGTERM)
		if code, _ := waitExit(t, cmd); code != 143 || !strings.Contains(errb.String(), "interrupted by SIGTERM") {
			t.Errorf("%s: ckpt save, %v then SIGTERM: exit %d %q; want 143, by SIGTERM", tc.name, tc.ignored, code, errb.String())
		}
	}
}

// waitExit waits for cmd and returns its exit code and how long it took.
func waitExit(t *testing.T, cmd *exec.Cmd) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), time.Since(start)
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0, time.Since(start)
	case <-time.After(2 * signalDeadline):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%v still running %v after the signal", cmd.Args, 2*signalDeadline)
		return 0, 0
	}
}
