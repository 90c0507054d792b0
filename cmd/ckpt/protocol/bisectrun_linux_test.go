package protocol

import (
	"bytes"
	"context"
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
