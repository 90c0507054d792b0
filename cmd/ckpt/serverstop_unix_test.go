//go:build unix

package main

import (
	"strings"
	"syscall"
	"testing"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/internal/localsock"
	"github.com/ckpt/ckpt/internal/testbound"
)

// A server stopped while it runs a client's save, by SIGTERM or by
// SIGKILL, leaves the client saying that the server stopped before the
// command finished (exit 1), never "context canceled"; the save made
// nothing, and the next save makes it.
func TestServerStoppedMidSaveTellsTheClient(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			e := newEnv(t)
			e.write("a.txt", "one\n")
			paused := e.pauseServersAt("save-scanned")
			srv := e.listenServer()
			client, _, stderr := e.start(strings.NewReader(""), "--lock-timeout", "0", "save")
			paused()
			if err := srv.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			code, _ := waitExit(t, client)
			if code != protocol.ExitError || !strings.Contains(stderr.String(), "stopped before the command finished") ||
				strings.Contains(stderr.String(), "context canceled") || strings.Count(stderr.String(), "\n") != 1 {
				t.Fatalf("client of a server stopped by %v mid-save: exit %d, stderr %q; want exit 1 saying the server stopped", sig, code, stderr.String())
			}
			srv.Wait()
			if out := e.ok("--lock-timeout", "0", "list"); strings.Contains(out, "@") {
				t.Fatalf("the interrupted save recorded a checkpoint:\n%s", out)
			}
			e.ok("--lock-timeout", "0", "save")
		})
	}
}

// A client of a server that is stopped (Ctrl-Z: the system still takes
// its connections) or stuck does not wait for it for ever: a forwarded
// command whose server does not accept it, and a stdio serve or an mcp
// whose attach it does not answer, fail busy naming the server's endpoint once
// --lock-timeout (at least minServerAnswer) has passed.
func TestClientsOfAStoppedServerFailBusy(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "one\n")
	srv := e.listenServer()
	if err := srv.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer srv.Process.Signal(syscall.SIGCONT)
	for _, args := range [][]string{{"list"}, {"serve"}, {"mcp"}} {
		var r result
		testbound.Within(t, testbound.Hang, func() {
			r = e.run("", append([]string{"--lock-timeout", "0"}, args...)...)
		})
		if r.code != protocol.ExitBusy || !strings.Contains(r.stderr, "did not answer") || !strings.Contains(r.stderr, localsock.Endpoint(e.store)) {
			t.Errorf("%v with a stopped server: exit %d, stderr %q; want %d naming the server", args, r.code, r.stderr, protocol.ExitBusy)
		}
	}
}
