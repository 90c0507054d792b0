//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/internal/testbound"
)

// uiGet fetches path from the page's server with token (none when empty).
func uiGet(t *testing.T, base, token, path string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("X-Ckpt-Token", token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, body
}

// The page's server opens the store per request: while it runs, another
// process saves, the page shows the new checkpoint, previews and makes a
// restore, requests without the token are refused, and a signal stops the
// server.
func TestCLIUIServesTheStoreWithoutHoldingIt(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "one")
	e.ok("save", "-m", "first")
	var stdout io.ReadCloser
	cmd := testbound.Start(t, func() *exec.Cmd {
		cmd := exec.Command(ckptBin, "-C", e.ws, "--store", e.store, "--json", "ui")
		cmd.Env = append(os.Environ(), "HOME="+e.home, "CKPT_TASK=")
		stdout = stdoutPipe(t, cmd)
		return cmd
	})
	defer cmd.Process.Kill()
	var doc uiJSON
	if err := json.NewDecoder(jsonDocument(t, bufio.NewReader(stdout))).Decode(&doc); err != nil {
		t.Fatalf("ui --json: %v", err)
	}
	u, err := url.Parse(doc.URL)
	if err != nil || u.Query().Get("token") == "" || !strings.HasPrefix(u.Host, "127.0.0.1:") {
		t.Fatalf("ui url %q: want a loopback address with a token", doc.URL)
	}
	base, token := "http://"+u.Host, u.Query().Get("token")
	if code, _ := uiGet(t, base, "", "/api/tasks"); code != http.StatusForbidden {
		t.Errorf("request without the token: %d, want 403", code)
	}
	e.write("a.txt", "two")
	e.ok("--lock-timeout", "0", "save", "-m", "second") // the page holds no lock
	code, body := uiGet(t, base, token, "/api/checkpoints?task=default&limit=10")
	if code != http.StatusOK || !strings.Contains(string(body), `"second"`) || !strings.Contains(string(body), `"first"`) {
		t.Fatalf("checkpoints: %d %s", code, body)
	}
	// The page previews a restore, then makes it, through the CLI's backend.
	plan := uiPost(t, base, token, "/api/plan", `{"task":"default","ref":"@1"}`)
	if !strings.Contains(plan, `"write":["a.txt"]`) {
		t.Fatalf("plan of a restore to @1: %s", plan)
	}
	if b, _ := os.ReadFile(filepath.Join(e.ws, "a.txt")); string(b) != "two" {
		t.Fatalf("the preview changed a.txt to %q", b)
	}
	restored := uiPost(t, base, token, "/api/restore", `{"task":"default","ref":"@1"}`)
	if b, _ := os.ReadFile(filepath.Join(e.ws, "a.txt")); string(b) != "one" || !strings.Contains(restored, `"backup":"`) {
		t.Fatalf("after the page's restore to @1: a.txt = %q, result %s", b, restored)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if code, _ := waitExit(t, cmd); code != 143 {
		t.Errorf("ui after SIGTERM exited %d, want 143", code)
	}
}

// uiPost posts body to path as the page does (token, its own Origin, a
// JSON body) and returns the answer, failing unless it is 200.
func uiPost(t *testing.T, base, token, path, body string) string {
	t.Helper()
	req, err := http.NewRequest("POST", base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Ckpt-Token", token)
	req.Header.Set("Origin", base)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	answer, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d %s", path, res.StatusCode, answer)
	}
	return string(answer)
}

// jsonDocument reads one JSON document from a command's output: off a
// terminal, --json prints each on one line (the server is listening once
// it is printed).
func jsonDocument(t *testing.T, r *bufio.Reader) io.Reader {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("ui printed %q then: %v", line, err)
	}
	return strings.NewReader(line)
}

// The page is for this machine only: an --addr other machines can reach
// is refused (exit 2) unless --allow-remote says it is meant.
func TestCLIUIRefusesANonLoopbackAddress(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "one")
	e.ok("save", "-m", "first")
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:0", "example.com:0"} {
		r := e.run("", "ui", "--addr", addr)
		if r.code != protocol.ExitUsage || !strings.Contains(r.stderr, "not a loopback address") || !strings.Contains(r.stderr, "--allow-remote") {
			t.Errorf("ui --addr %s: exit %d, stderr %q; want exit %d naming --allow-remote", addr, r.code, r.stderr, protocol.ExitUsage)
		}
	}
}
