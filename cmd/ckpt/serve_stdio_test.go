package main

import (
	"io"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol/protocoltest"
	"github.com/ckpt/ckpt/internal/testbound"
)

// serverCommand is ckpt run on e's workspace and store with args, as a
// host spawns it.
func (e *env) serverCommand(args ...string) *exec.Cmd {
	cmd := exec.Command(ckptBin, append([]string{"-C", e.ws, "--store", e.store}, args...)...)
	cmd.Env = append(append(os.Environ(), "HOME="+e.home, "CKPT_TASK="), e.serverEnv...)
	cmd.Stderr = os.Stderr
	return cmd
}

// stdioServe starts `ckpt serve` with flags and returns its process, a
// session over its stdio and end, which closes its stdin and expects it to
// exit 0; the test's end calls end unless the test did.
func (e *env) stdioServe(flags ...string) (cmd *exec.Cmd, s *protocoltest.Client, end func()) {
	e.t.Helper()
	cmd, in, s := e.startStdio(func() *exec.Cmd { return e.serverCommand(append([]string{"serve"}, flags...)...) })
	end = sync.OnceFunc(func() {
		in.Close()
		if err := cmd.Wait(); err != nil {
			e.t.Errorf("serve after its input ended: %v", err)
		}
	})
	e.t.Cleanup(end)
	return cmd, s, end
}

// startStdio starts the command build makes (testbound.Start) and returns
// it, its stdin and a session over its stdio; closing in ends its input.
func (e *env) startStdio(build func() *exec.Cmd) (cmd *exec.Cmd, in io.WriteCloser, s *protocoltest.Client) {
	e.t.Helper()
	var out io.ReadCloser
	cmd = testbound.Start(e.t, func() *exec.Cmd {
		cmd := build()
		in, out = stdinPipe(e.t, cmd), stdoutPipe(e.t, cmd)
		return cmd
	})
	return cmd, in, protocoltest.NewClient(e.t, in, out)
}

// stdinPipe is cmd.StdinPipe, failing t on an error.
func stdinPipe(t testing.TB, cmd *exec.Cmd) io.WriteCloser {
	t.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// stdoutPipe is cmd.StdoutPipe, failing t on an error.
func stdoutPipe(t testing.TB, cmd *exec.Cmd) io.ReadCloser {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	return out
}
