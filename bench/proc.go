//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
)

// step is one measured operation: wall time, the peak RSS of the largest
// process it ran, and what the tool reported.
type step struct {
	Dur     time.Duration
	RSSKiB  int64  // max over the operation's processes (KiB, as getrusage reports on Linux)
	Procs   int    // processes started
	ID      string // checkpoint or commit created or reported
	Files   int    // diff: changed files
	Written int    // restore: files the tool says it wrote (-1: the tool does not say)
	Deleted int    // restore: files the tool says it deleted (-1: unknown)
	Watches int    // inotify watches a resident process holds after it (0: none or not known)
	// Decode is the part of Dur the bench spent decoding a JSON-RPC
	// result into Go values, after the whole reply had arrived (0: none).
	Decode time.Duration
	// Phases is where a ckpt restore says its time went (nil: not known).
	Phases *protocol.PhasesJSON
	// Background is how long the process a CLI save started to compress
	// in the background ran on after the save returned (0: none started).
	Background time.Duration
	// backgroundPID is the process a CLI save started (0: none).
	backgroundPID int
}

// add folds a process run into the step.
func (s *step) add(r procResult) {
	s.Dur += r.Dur
	s.RSSKiB = max(s.RSSKiB, r.RSSKiB)
	s.Procs++
}

// procResult is one finished child process.
type procResult struct {
	Dur    time.Duration
	RSSKiB int64
	Stdout []byte
}

// runProc runs name with args in dir under env and measures its wall time
// (fork and exec included) and peak RSS. A non-zero exit is an error that
// carries the command's stderr.
func runProc(ctx context.Context, dir string, env []string, name string, args ...string) (procResult, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	res := procResult{Dur: time.Since(start), Stdout: stdout.Bytes()}
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			res.RSSKiB = ru.Maxrss
		}
	}
	if err != nil {
		return res, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, firstLines(stderr.String(), 5))
	}
	return res, nil
}

// firstLines trims s to its first n lines.
func firstLines(s string, n int) string {
	lines := strings.SplitN(strings.TrimSpace(s), "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, "\n")
}
