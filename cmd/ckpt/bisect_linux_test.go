package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bisect's command runs with the environment and the umask of the command
// that asked for it, cold and through a server (whose own environment
// lacks the client's variables), not with the server's environment nor
// the private umask ckpt keeps for its store.
func TestCLIBisectCommandRunsInTheClientsEnvironment(t *testing.T) {
	e := newEnv(t)
	e.write("a", "1\n")
	e.ok("save")
	e.write("a", "2\n")
	e.ok("save")
	e.write("a", "3\n")
	e.ok("save")
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(status), "Umask:")
	umask := strings.Fields(rest)[0]
	log := filepath.Join(t.TempDir(), "seen")
	e.clientEnv = []string{"CKPT_TEST_CLIENT=yes", "CKPT_TEST_LOG=" + log}
	for _, how := range []string{"cold", "through a server"} {
		if how != "cold" {
			e.listenServer()
		}
		os.Remove(log)
		e.ok("--lock-timeout", "0", "bisect", "--good", "@1", "--bad", "@3", "--run", `echo "$CKPT_TEST_CLIENT $(umask)" >> "$CKPT_TEST_LOG"; exit 1`)
		b, err := os.ReadFile(log)
		if err != nil {
			t.Fatalf("%s: the command ran nowhere it could write the log: %v", how, err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if line != "yes "+umask {
				t.Fatalf("%s: the command saw %q, want the client's variable and umask: %q", how, line, "yes "+umask)
			}
		}
	}
}
