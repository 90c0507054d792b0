package protocol

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/testbound"
)

// TestMain makes this test binary, run with CKPT_TEST_SLEEPER set, a
// process a test command starts and leaves running: it writes its pid to
// child.pid in its directory and waits to be killed.
func TestMain(m *testing.M) {
	if os.Getenv("CKPT_TEST_SLEEPER") != "" {
		if err := os.WriteFile("child.pid.tmp", []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
			os.Exit(3)
		}
		if err := os.Rename("child.pid.tmp", "child.pid"); err != nil {
			os.Exit(3)
		}
		time.Sleep(5 * time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// sleeperCommand writes a batch file in dir that starts this binary as a
// sleeper (in the background when background is set) and, once it wrote
// its pid, exits 0; it returns the command that runs it.
func sleeperCommand(t *testing.T, dir string, background bool) string {
	t.Helper()
	t.Setenv("CKPT_TEST_SLEEPER", "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	start := `"` + exe + `"`
	if background {
		start = `start /b "" ` + start
	}
	script := "@echo off\r\n" + start + "\r\n:wait\r\nif not exist child.pid goto wait\r\nexit /b 0\r\n"
	if err := os.WriteFile(filepath.Join(dir, "run.cmd"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return "run.cmd"
}

// sleeperPid waits for the sleeper in dir to write its pid.
func sleeperPid(t *testing.T, dir string) uint32 {
	t.Helper()
	var pid uint64
	testbound.Until(t, "the command started its child", func() bool {
		b, err := os.ReadFile(filepath.Join(dir, "child.pid"))
		pid, _ = strconv.ParseUint(string(b), 10, 32)
		return err == nil && pid > 0
	})
	return uint32(pid)
}

// runningProcess reports whether process pid has not ended.
func runningProcess(pid uint32) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	return windows.GetExitCodeProcess(h, &code) == nil && code == 259 // STILL_ACTIVE
}

// A bisect test that is cancelled (the bisect interrupted) kills what its
// command started too, not only cmd.exe: nothing is left running.
func TestACancelledBisectTestKillsWhatItStarted(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	test := CommandTest(sleeperCommand(t, dir, false), nil, nil)
	done := make(chan error, 1)
	go func() {
		_, err := test(ctx, dir, engine.CheckpointInfo{Seq: 1})
		done <- err
	}()
	pid := sleeperPid(t, dir)
	cancel()
	testbound.Within(t, testbound.Hang, func() {
		if err := <-done; err == nil {
			t.Error("the cancelled test reported a verdict")
		}
	})
	testbound.Until(t, "the command's child is gone", func() bool { return !runningProcess(pid) })
}

// A test command that exits but leaves a process running gets the verdict
// of its exit status, and what it left is ended with it.
func TestABisectTestEndsWhatItLeftRunning(t *testing.T) {
	dir := t.TempDir()
	test := CommandTest(sleeperCommand(t, dir, true), io.Discard, io.Discard)
	var v engine.BisectVerdict
	var err error
	testbound.Within(t, testbound.Hang, func() { v, err = test(context.Background(), dir, engine.CheckpointInfo{Seq: 1}) })
	if err != nil || v != engine.BisectGood {
		t.Fatalf("verdict %v, %v; want good, the command's exit status", v, err)
	}
	pid := sleeperPid(t, dir)
	testbound.Until(t, "what the command left is gone", func() bool { return !runningProcess(pid) })
}
