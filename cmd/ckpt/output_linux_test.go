package main

import (
	"os"
	"strings"
	"testing"
)

// A command whose own output cannot be written (stdout on a full disk)
// fails the same way through a server as cold: with the write's error,
// not as if the server had stopped.
func TestCLIOutputFailureIsTheClientsOwnThroughAServer(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "one\n")
	e.ok("save")
	full := func() result {
		t.Helper()
		f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		return e.runTo("", "", f, "--lock-timeout", "0", "cat", "@1", "a.txt")
	}
	cold := full()
	e.listenServer()
	served := full()
	if cold.code != 1 || !strings.Contains(cold.stderr, "no space left on device") || served.code != cold.code || served.stderr != cold.stderr {
		t.Fatalf("cat to a full disk: cold exit %d %q, through a server exit %d %q; want both exit 1 with the write's error", cold.code, cold.stderr, served.code, served.stderr)
	}
}
