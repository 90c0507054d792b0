//go:build linux

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
)

// system is one checkpoint backend under test. Every operation works on the
// shared workspace and the system's own store; reset deletes the store.
type system interface {
	name() string
	storeDir() string
	reset() error
	save(ctx context.Context, msg string) (step, error)
	restore(ctx context.Context, ref string) (step, error)
	diff(ctx context.Context, from, to string) (step, error)
}

// ckptCLI runs the ckpt binary, one process per operation, with the Cline
// exclusion profile so that it captures what the shadow repository does.
// Times include process start-up and opening the store.
type ckptCLI struct {
	sp             *spawner
	bin, ws, store string
	env            []string
}

func (c *ckptCLI) name() string     { return "ckpt-cli" }
func (c *ckptCLI) storeDir() string { return c.store }
func (c *ckptCLI) reset() error     { return os.RemoveAll(c.store) }

// run runs one ckpt command with --json and decodes its output into out.
func (c *ckptCLI) run(ctx context.Context, out any, args ...string) (step, error) {
	full := append([]string{"--store", c.store, "-C", c.ws, "--profile", "cline", "--json"}, args...)
	var s step
	r, err := c.sp.run(ctx, c.ws, c.env, c.bin, full...)
	s.add(r)
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(r.Stdout, out); err != nil {
		return s, fmt.Errorf("ckpt %s: decoding output: %w", args[0], err)
	}
	return s, nil
}

// save runs `ckpt save`; when it starts the background recompression, the
// save waits for that process to end (untimed: s.Background says how
// long it ran on), so that the next operation and the store's size find
// it done, as a user who comes back a few seconds later would.
func (c *ckptCLI) save(ctx context.Context, msg string) (step, error) {
	s, err := saveVia(ctx, c.run, msg)
	if err != nil || s.backgroundPID == 0 {
		return s, err
	}
	start := time.Now()
	err = waitForeignExit(s.backgroundPID)
	s.Background = time.Since(start)
	return s, err
}

// waitForeignExit waits for process pid, not a child of this one, to
// exit: a process already gone counts as exited.
func waitForeignExit(pid int) error {
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("pidfd_open %d: %w", pid, err)
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(fds, -1); !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

func (c *ckptCLI) restore(ctx context.Context, ref string) (step, error) {
	return restoreVia(ctx, c.run, ref)
}

func (c *ckptCLI) diff(ctx context.Context, from, to string) (step, error) {
	return diffVia(ctx, c.run, from, to)
}

// jsonCall runs one ckpt command with --json and decodes its output into out.
type jsonCall func(ctx context.Context, out any, args ...string) (step, error)

func saveVia(ctx context.Context, call jsonCall, msg string) (step, error) {
	var out struct {
		ID    string `json:"id"`
		Stats struct {
			Files int `json:"files"`
		} `json:"stats"`
		BackgroundPID int `json:"background_pid"`
	}
	s, err := call(ctx, &out, "save", "-m", msg)
	s.ID, s.Files, s.backgroundPID = out.ID, out.Stats.Files, out.BackgroundPID
	return s, err
}

func restoreVia(ctx context.Context, call jsonCall, ref string) (step, error) {
	var out struct {
		Written int                 `json:"written"`
		Deleted int                 `json:"deleted"`
		Phases  protocol.PhasesJSON `json:"phases_ms"`
	}
	s, err := call(ctx, &out, "restore", ref)
	s.Written, s.Deleted, s.Phases = out.Written, out.Deleted, &out.Phases
	return s, err
}

// diffVia asks for the JSON change set, which carries both sides of every text
// file: the same information as the shadow flow's `git show` of each side.
func diffVia(ctx context.Context, call jsonCall, from, to string) (step, error) {
	var out struct {
		Files []json.RawMessage `json:"files"`
	}
	s, err := call(ctx, &out, "diff", from, to)
	s.Files = len(out.Files)
	return s, err
}

// ckptLib measures the engine library in a child process (this binary in
// worker mode), so that each operation's peak RSS is its own. Times are
// measured inside the worker from engine.Open to Close, excluding process
// start-up.
type ckptLib struct {
	sp              *spawner
	self, ws, store string
	profileDir      string // when set, the worker writes a CPU profile per operation here
	deferred        bool   // open the engine with DeferCompression
	env             []string
	seq             int
}

func (l *ckptLib) name() string     { return "ckpt-lib" }
func (l *ckptLib) storeDir() string { return l.store }
func (l *ckptLib) reset() error     { return os.RemoveAll(l.store) }

// run starts one worker and returns its measurement.
func (l *ckptLib) run(ctx context.Context, op string, args ...string) (step, error) {
	l.seq++
	full := append([]string{"worker", "-op", op, "-ws", l.ws, "-store", l.store}, args...)
	if l.profileDir != "" {
		full = append(full, "-cpuprofile", fmt.Sprintf("%s/%02d-%s.pprof", l.profileDir, l.seq, op))
	}
	if l.deferred {
		full = append(full, "-defer-compression")
	}
	r, err := l.sp.run(ctx, l.ws, l.env, l.self, full...)
	s := step{RSSKiB: r.RSSKiB, Procs: 1}
	if err != nil {
		return s, err
	}
	var out workerResult
	if err := json.Unmarshal(r.Stdout, &out); err != nil {
		return s, fmt.Errorf("worker %s: decoding output: %w", op, err)
	}
	s.Dur = time.Duration(out.Nanos)
	s.ID, s.Files, s.Written, s.Deleted = out.ID, out.Files, out.Written, out.Deleted
	return s, nil
}

func (l *ckptLib) save(ctx context.Context, msg string) (step, error) {
	return l.run(ctx, "save", "-msg", msg)
}

func (l *ckptLib) restore(ctx context.Context, ref string) (step, error) {
	return l.run(ctx, "restore", "-from", ref)
}

func (l *ckptLib) diff(ctx context.Context, from, to string) (step, error) {
	return l.run(ctx, "diff", "-from", from, "-to", to)
}
