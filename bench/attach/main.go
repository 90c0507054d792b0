// Command attach times a save through a stdio `ckpt serve` that owns the
// store against saves of clients attached to it: a second stdio serve
// (relayed through the owner's endpoint) and a JSON-RPC client on the
// endpoint itself, as the TypeScript shared client connects. Each round
// edits one file before each client's save, clients interleaved; it prints
// each client's median, min and max.
//
//	go build -o /tmp/ckpt ./cmd/ckpt && go run ./bench/attach -ckpt /tmp/ckpt -rounds 41 -files 2000
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/ckpt/ckpt/internal/localsock"
)

func main() {
	bin := flag.String("ckpt", "ckpt", "the ckpt binary")
	rounds := flag.Int("rounds", 41, "saves per client")
	files := flag.Int("files", 2000, "files in the workspace, about 1 KiB each")
	flag.Parse()
	if err := run(*bin, *rounds, *files); err != nil {
		fmt.Fprintln(os.Stderr, "attach:", err)
		os.Exit(1)
	}
}

// rpc is a JSON-RPC connection, one request at a time.
type rpc struct {
	w  io.Writer
	r  *bufio.Reader
	id int
}

// call sends a request and returns its result, skipping notifications.
func (c *rpc) call(method string, params any) (json.RawMessage, error) {
	c.id++
	p, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	if _, err := fmt.Fprintf(c.w, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", c.id, method, p); err != nil {
		return nil, err
	}
	for {
		line, err := c.r.ReadBytes('\n')
		if err != nil {
			return nil, err
		}
		var m struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			return nil, err
		}
		switch {
		case m.ID == nil || *m.ID != c.id:
		case m.Error != nil:
			return nil, fmt.Errorf("%s: %s", method, m.Error)
		default:
			return m.Result, nil
		}
	}
}

// serve starts a stdio `ckpt serve` of the workspace and store.
func serve(bin, ws, store string) (*rpc, *exec.Cmd, error) {
	cmd := exec.Command(bin, "-C", ws, "--store", store, "--lock-timeout", "0", "--task", "bench", "serve")
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	return &rpc{w: in, r: bufio.NewReader(out)}, cmd, nil
}

func run(bin string, rounds, files int) error {
	dir, err := os.MkdirTemp("", "ckpt-attach-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ws, store := filepath.Join(dir, "ws"), filepath.Join(dir, "store")
	for i := range files {
		p := filepath.Join(ws, fmt.Sprintf("d%d", i%50), fmt.Sprintf("f%d.txt", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, fmt.Appendf(nil, "file %d\n%0900d\n", i, i), 0o644); err != nil {
			return err
		}
	}
	owner, ownerCmd, err := serve(bin, ws, store)
	if err != nil {
		return err
	}
	defer ownerCmd.Process.Kill()
	if _, err := owner.call("save", map[string]any{"message": "base"}); err != nil {
		return fmt.Errorf("owner: %w", err)
	}
	relayed, relayedCmd, err := serve(bin, ws, store)
	if err != nil {
		return err
	}
	defer relayedCmd.Process.Kill()
	conn, err := localsock.Dial(store)
	if err != nil {
		return fmt.Errorf("the owner does not listen: %w", err)
	}
	defer conn.Close()
	direct := &rpc{w: conn, r: bufio.NewReader(conn)}
	if _, err := direct.call("attach", map[string]any{"workspace": ws, "task": "bench"}); err != nil {
		return err
	}
	clients := []struct {
		name string
		c    *rpc
	}{{"owner's own save", owner}, {"attached stdio serve", relayed}, {"attached socket client", direct}}
	times := make([][]time.Duration, len(clients))
	edit := filepath.Join(ws, "d0", "f0.txt")
	for n := range rounds {
		for i, cl := range clients {
			if err := os.WriteFile(edit, fmt.Appendf(nil, "edit %d %d\n", n, i), 0o644); err != nil {
				return err
			}
			start := time.Now()
			res, err := cl.c.call("save", map[string]any{"message": cl.name})
			if err != nil {
				return fmt.Errorf("%s: %w", cl.name, err)
			}
			times[i] = append(times[i], time.Since(start))
			var saved struct{ Created bool }
			if err := json.Unmarshal(res, &saved); err != nil || !saved.Created {
				return errors.Join(fmt.Errorf("%s: the save created no checkpoint: %s", cl.name, res), err)
			}
		}
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for i, cl := range clients {
		t := slices.Sorted(slices.Values(times[i]))
		fmt.Printf("%-24s median %7.2f ms  min %6.2f  max %7.2f  (n=%d, %d files)\n",
			cl.name, ms(t[len(t)/2]), ms(t[0]), ms(t[len(t)-1]), len(t), files)
	}
	return nil
}
