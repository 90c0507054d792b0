//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ckpt/ckpt/internal/cmdwire"
	"github.com/ckpt/ckpt/internal/localsock"
)

// ckptServer measures a resident server: one `ckpt serve --listen` per
// store, which keeps the engine and its change watcher open, and every
// operation one client call over the server's socket (the command line
// the CLI would forward). Times are the call's, from dial to the exit
// frame; RSS is the server's peak so far.
type ckptServer struct {
	sys            string // the system's name
	bin, ws, store string
	env            []string
	resident            // the server process
	settle         bool // measure after the idle recompression (sysServerSettled)
}

// System names of the resident server with its change watcher and with
// the watcher turned off (CKPT_WATCHER=none): every save a full stat walk,
// which is what a platform without a watcher gets.
const (
	sysServer          = "ckpt-server"
	sysServerNoWatcher = "ckpt-server-nowatch"
)

// newServers returns the two resident-server systems, each with a store
// of its own in work.
func newServers(bin, ws, work string, env []string) []system {
	return []system{
		&ckptServer{sys: sysServer, bin: bin, ws: ws, store: filepath.Join(work, "store-server"), env: env},
		&ckptServer{sys: sysServerNoWatcher, bin: bin, ws: ws, store: filepath.Join(work, "store-server-nowatch"),
			env: append(slices.Clip(env), "CKPT_WATCHER=none")},
	}
}

func (c *ckptServer) name() string     { return c.sys }
func (c *ckptServer) storeDir() string { return c.store }

// reset stops the server, deletes the store and starts a server on a new one.
func (c *ckptServer) reset() error {
	c.close()
	if err := os.RemoveAll(c.store); err != nil {
		return err
	}
	cmd := exec.Command(c.bin, "--store", c.store, "-C", c.ws, "--profile", "cline", "serve", "--listen")
	cmd.Env, cmd.Stderr = c.env, os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	c.srv = cmd
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "listening on ") {
		c.close()
		return fmt.Errorf("ckpt serve --listen said %q: %v", line, err)
	}
	return nil
}

// close stops the server, if one runs.
func (c *ckptServer) close() {
	if c.srv == nil {
		return
	}
	c.srv.Process.Signal(os.Interrupt)
	c.srv.Wait()
	c.srv = nil
}

// call runs one command through the server and decodes its JSON output into out.
func (c *ckptServer) call(ctx context.Context, out any, args ...string) (step, error) {
	start := time.Now()
	stdout, err := c.exchange(ctx, append([]string{"--store", c.store, "-C", c.ws, "--profile", "cline", "--json"}, args...))
	s := step{Dur: time.Since(start), RSSKiB: c.peakRSS(), Watches: c.watches()}
	if err != nil {
		return s, fmt.Errorf("ckpt %s through the server: %w", args[0], err)
	}
	if err := json.Unmarshal(stdout, out); err != nil {
		return s, fmt.Errorf("ckpt %s: decoding output: %w", args[0], err)
	}
	return s, nil
}

func (c *ckptServer) exchange(ctx context.Context, args []string) ([]byte, error) {
	conn, err := localsock.Dial(c.store)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	var stdout, stderr bytes.Buffer
	code, err := cmdwire.Exchange(conn, cmdwire.Request{Args: args, Cwd: c.ws}, time.Time{}, &stdout, &stderr)
	switch {
	case err != nil:
		return nil, err
	case code != 0:
		return nil, fmt.Errorf("exit %d: %s", code, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

func (c *ckptServer) save(ctx context.Context, msg string) (step, error) {
	return saveVia(ctx, c.call, msg)
}

func (c *ckptServer) restore(ctx context.Context, ref string) (step, error) {
	return restoreVia(ctx, c.call, ref)
}

func (c *ckptServer) diff(ctx context.Context, from, to string) (step, error) {
	return diffVia(ctx, c.call, from, to)
}
