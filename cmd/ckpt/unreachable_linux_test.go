package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/internal/localsock"
)

// A command that cannot connect to the store's endpoint (here its backlog
// is full, and connect fails with EAGAIN) does not take that for an error
// of its own: it tries the store and looks again between the slices of
// its wait. While a process holds the store it fails busy naming that
// holder once --lock-timeout has passed; with the store free it opens it
// and runs.
func TestCommandThatCannotReachAServerLeavesItToTheLock(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "one\n")
	e.ok("save")
	endpoint := localsock.Endpoint(e.store)
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: endpoint}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil { // an endpoint that accepts nothing, with the least backlog
		t.Fatal(err)
	}
	for full := false; !full; {
		c, err := net.Dial("unix", endpoint)
		switch {
		case errors.Is(err, syscall.EAGAIN):
			full = true
		case err != nil:
			t.Fatalf("filling the endpoint's backlog: %v", err)
		default:
			defer c.Close()
		}
	}
	release := e.holdLock()
	want := fmt.Sprintf("pid %d (%s)", os.Getpid(), lockHolder)
	if r := e.run("", "--lock-timeout", "300ms", "list"); r.code != protocol.ExitBusy || !strings.Contains(r.stderr, want) {
		t.Fatalf("list with the store held and its endpoint full: exit %d, stderr %q; want %d naming %q", r.code, r.stderr, protocol.ExitBusy, want)
	}
	release()
	if r := e.run("", "--lock-timeout", "300ms", "list"); r.code != 0 {
		t.Fatalf("list with the store free and its endpoint full: exit %d, stderr %q", r.code, r.stderr)
	}
}
