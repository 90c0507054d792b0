//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/internal/jsonrpc"
)

// sysRPC is the system of an embedded host: `ckpt serve` on stdio.
const sysRPC = "ckpt-rpc"

// ckptRPC measures a host that embeds ckpt as the TypeScript client and
// the Cline and Roo Code adapters do: it starts `ckpt serve` on its stdin
// and stdout when the workspace opens (once per repetition, untimed, as
// ckpt-server's start is) and sends every operation as one JSON-RPC
// request. Times are the request's round trip, from writing it to reading
// its reply; RSS is the serve process's peak so far.
type ckptRPC struct {
	bin, ws, store string
	env            []string
	resident       // the serve process
	client         *jsonrpc.Client
}

func newRPC(bin, ws, work string, env []string) *ckptRPC {
	return &ckptRPC{bin: bin, ws: ws, store: filepath.Join(work, "store-rpc"), env: env}
}

// The params of the host methods the bench calls, named as package
// protocol names them. Its server decodes params strictly, so a field
// renamed there fails the call (and TestRPCSystemOnTinyCorpus) instead of
// being ignored.
type (
	rpcSaveParams struct {
		Message string `json:"message"`
	}
	rpcDiffParams struct {
		From string `json:"from"`
		To   string `json:"to"`
	}
	rpcRestoreParams struct {
		Ref string `json:"ref"`
	}
)

func (c *ckptRPC) name() string     { return sysRPC }
func (c *ckptRPC) storeDir() string { return c.store }

// stdio joins the serve process's stdin and stdout into the connection
// the client talks over; closing it closes stdin, which ends the server.
type stdio struct {
	io.Reader
	io.WriteCloser
}

// reset stops the serve process, deletes the store and starts `ckpt serve`
// on a new one, then waits for its answer to a first request: from then
// on the engine is open, as a host's would be by the agent's first step.
func (c *ckptRPC) reset() error {
	c.close()
	if err := os.RemoveAll(c.store); err != nil {
		return err
	}
	cmd := exec.Command(c.bin, "--store", c.store, "-C", c.ws, "--profile", "cline", "serve")
	cmd.Env, cmd.Stderr = c.env, os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	c.srv, c.client = cmd, jsonrpc.NewClient(stdio{out, in}, nil)
	var tasks protocol.TasksJSON
	if err := c.client.Call(context.Background(), "tasks", nil, nil, &tasks); err != nil {
		c.close()
		return fmt.Errorf("ckpt serve's first request: %w", err)
	}
	return nil
}

// close ends the serve process as a host does when the workspace closes:
// its input ends, it finishes and exits.
func (c *ckptRPC) close() {
	if c.srv == nil {
		return
	}
	c.client.Close()
	c.srv.Wait()
	c.srv, c.client = nil, nil
}

// call sends one request and decodes its result into out. The time is
// the host's: the round trip and the decoding, which is also reported
// apart (step.Decode).
func (c *ckptRPC) call(ctx context.Context, method string, params, out any) (step, error) {
	start := time.Now()
	var raw json.RawMessage
	err := c.client.Call(ctx, method, params, nil, &raw)
	arrived := time.Now()
	if err == nil {
		err = json.Unmarshal(raw, out)
	}
	s := step{Dur: time.Since(start), Decode: time.Since(arrived), RSSKiB: c.peakRSS(), Watches: c.watches()}
	if err != nil {
		return s, fmt.Errorf("%s over JSON-RPC: %w", method, err)
	}
	return s, nil
}

func (c *ckptRPC) save(ctx context.Context, msg string) (step, error) {
	var res protocol.SaveJSON
	s, err := c.call(ctx, "save", rpcSaveParams{Message: msg}, &res)
	s.ID, s.Files = res.ID, int(res.Stats.Files)
	return s, err
}

// diff asks for the change set, which carries both sides of every text
// file, as the CLI's diff --json does.
func (c *ckptRPC) diff(ctx context.Context, from, to string) (step, error) {
	var res protocol.HostDiffJSON
	s, err := c.call(ctx, "diff", rpcDiffParams{From: from, To: to}, &res)
	s.Files = len(res.Files)
	return s, err
}

func (c *ckptRPC) restore(ctx context.Context, ref string) (step, error) {
	var res protocol.HostRestoreJSON
	s, err := c.call(ctx, "restore", rpcRestoreParams{Ref: ref}, &res)
	s.Written, s.Deleted, s.Phases = res.Written, res.Deleted, &res.PhasesMs
	return s, err
}
