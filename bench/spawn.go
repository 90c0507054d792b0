//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"sync"
	"time"
)

// Peak RSS of a child process on Linux is not its own alone: Go starts
// children with vfork (CLONE_VM), and at exec the kernel folds the shared
// address space's high-water mark, the parent's, into the child's ru_maxrss.
// The benchmark process holds corpus manifests and floor buffers, so every
// measured command is started by a small helper process instead (this
// binary in "spawn" mode), whose own high-water mark (Spawner.Baseline)
// bounds the error.

// spawnRequest asks the helper to run one command.
type spawnRequest struct {
	Dir  string   `json:"dir"`
	Env  []string `json:"env"`
	Name string   `json:"name"`
	Args []string `json:"args"`
	Keep bool     `json:"keep"` // return stdout; otherwise it is read and dropped
}

// spawnReply is the helper's answer.
type spawnReply struct {
	Nanos  int64  `json:"ns"`
	RSSKiB int64  `json:"rss_kib"`
	Stdout []byte `json:"stdout"`
	Err    string `json:"err,omitempty"`
}

// spawner is the parent's handle on the helper. It is safe for concurrent
// use; commands run one at a time.
type spawner struct {
	mu   sync.Mutex
	cmd  *exec.Cmd
	enc  *json.Encoder
	dec  *json.Decoder
	in   io.Closer
	base int64 // the helper's ru_maxrss after running a trivial command, KiB
}

// startSpawner starts the helper (self in spawn mode) and measures its
// baseline with /bin/true.
func startSpawner(ctx context.Context, self string) (*spawner, error) {
	cmd := exec.CommandContext(ctx, self, "spawn")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	sp := &spawner{cmd: cmd, enc: json.NewEncoder(in), dec: json.NewDecoder(bufio.NewReader(out)), in: in}
	r, err := sp.run(ctx, "", os.Environ(), "true")
	if err != nil {
		sp.close()
		return nil, err
	}
	sp.base = r.RSSKiB
	return sp, nil
}

// run runs name with args in dir under env through the helper and returns
// its wall time (fork and exec included), peak RSS and stdout. A non-zero
// exit is an error carrying the command's stderr.
func (sp *spawner) run(ctx context.Context, dir string, env []string, name string, args ...string) (procResult, error) {
	return sp.do(ctx, spawnRequest{Dir: dir, Env: env, Name: name, Args: args, Keep: true})
}

// runDiscard is run without returning stdout, for commands whose output
// only has to be produced (git show), keeping the helper small.
func (sp *spawner) runDiscard(ctx context.Context, dir string, env []string, name string, args ...string) (procResult, error) {
	return sp.do(ctx, spawnRequest{Dir: dir, Env: env, Name: name, Args: args})
}

func (sp *spawner) do(ctx context.Context, req spawnRequest) (procResult, error) {
	if err := ctx.Err(); err != nil {
		return procResult{}, err
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if err := sp.enc.Encode(req); err != nil {
		return procResult{}, fmt.Errorf("bench: spawn helper: %w", err)
	}
	var rep spawnReply
	if err := sp.dec.Decode(&rep); err != nil {
		return procResult{}, fmt.Errorf("bench: spawn helper: %w", err)
	}
	res := procResult{Dur: time.Duration(rep.Nanos), RSSKiB: rep.RSSKiB, Stdout: rep.Stdout}
	if rep.Err != "" {
		return res, errors.New(rep.Err)
	}
	return res, nil
}

// close stops the helper.
func (sp *spawner) close() error {
	sp.in.Close()
	return sp.cmd.Wait()
}

// serveSpawn is the helper's loop: one request in, one reply out, until
// stdin closes.
func serveSpawn(ctx context.Context, in io.Reader, out io.Writer) error {
	debug.SetGCPercent(10)
	dec := json.NewDecoder(bufio.NewReader(in))
	enc := json.NewEncoder(out)
	for {
		var req spawnRequest
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		r, err := runProc(ctx, req.Dir, req.Env, req.Name, req.Args...)
		rep := spawnReply{Nanos: r.Dur.Nanoseconds(), RSSKiB: r.RSSKiB}
		if req.Keep {
			rep.Stdout = r.Stdout
		}
		if err != nil {
			rep.Err = err.Error()
		}
		if err := enc.Encode(rep); err != nil {
			return err
		}
	}
}
