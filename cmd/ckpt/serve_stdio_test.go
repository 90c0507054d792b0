package main

import (
	"io"
	"os"
	"os/exec"
	"sync"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol/protocoltest"
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
	cmd = e.serverCommand(append([]string{"serve"}, flags...)...)
	in, s := e.startStdio(cmd)
	end = sync.OnceFunc(func() {
		in.Close()
		if err := cmd.Wait(); err != nil {
			e.t.Errorf("serve after its input ended: %v", err)
		}
	})
	e.t.Cleanup(end)
	return cmd, s, end
}

// startStdio starts cmd and returns its stdin and a session over its
// stdio; closing in ends its input.
func (e *env) startStdio(cmd *exec.Cmd) (in io.WriteCloser, s *protocoltest.Client) {
	e.t.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	return in, protocoltest.NewClient(e.t, in, out)
}
