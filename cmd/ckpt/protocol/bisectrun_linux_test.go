package protocol

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/testbound"
)

// A bisect test that is cancelled (the bisect interrupted) kills what its
// command started too, not only the shell: nothing is left running.
func TestACancelledBisectTestKillsWhatItStarted(t *testing.T) {
	awayFromATerminal(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	test := CommandTest(`sleep 300 & echo $! > child.pid; wait`, nil, nil)
	done := make(chan error, 1)
	go func() {
		_, err := test(ctx, dir, engine.CheckpointInfo{Seq: 1})
		done <- err
	}()
	var pid int
	testbound.Until(t, "the command started its child", func() bool {
		b, err := os.ReadFile(filepath.Join(dir, "child.pid"))
		pid, _ = strconv.Atoi(string(bytes.TrimSpace(b)))
		return err == nil && pid > 0
	})
	cancel()
	testbound.Within(t, testbound.Hang, func() {
		if err := <-done; err == nil {
			t.Error("the cancelled test reported a verdict")
		}
	})
	testbound.Until(t, "the command's child is gone", func() bool {
		return !runningProcess(pid)
	})
}

// awayFromATerminal gives the test the stdin of a process away from a
// terminal (a server's, a pipeline's), where shellCommand gives the
// command a process group of its own, whatever stdin the tests were run
// with.
func awayFromATerminal(t *testing.T) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	stdin := os.Stdin
	os.Stdin = devnull
	t.Cleanup(func() {
		os.Stdin = stdin
		devnull.Close()
	})
}

// runningProcess reports whether pid is a process that has not ended (a
// zombie, ended and not yet reaped, has).
func runningProcess(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

// A test command that exits but leaves a process running (which holds its
// output) gets the verdict of its exit status, and what it left is ended
// with it, before the next checkpoint is tested in the same directory.
func TestABisectTestEndsWhatItLeftRunning(t *testing.T) {
	awayFromATerminal(t)
	dir := t.TempDir()
	test := CommandTest(`sleep 300 & echo $! > child.pid; exit 0`, io.Discard, io.Discard)
	var v engine.BisectVerdict
	var err error
	testbound.Within(t, testbound.Hang, func() { v, err = test(context.Background(), dir, engine.CheckpointInfo{Seq: 1}) })
	if err != nil || v != engine.BisectGood {
		t.Fatalf("verdict %v, %v; want good, the command's exit status", v, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "child.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(bytes.TrimSpace(b)))
	testbound.Until(t, "what the command left is gone", func() bool { return !runningProcess(pid) })
}
