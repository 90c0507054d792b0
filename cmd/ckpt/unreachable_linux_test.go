package main

import (
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/internal/localsock"
)

// A command that finds the store's server but cannot connect to it (here
// its backlog is full, and connect fails with EAGAIN) fails at once
// naming that server, instead of taking it for no server, opening the
// store and waiting out --lock-timeout for the lock the server holds.
func TestCommandFailsOnAServerItCannotReach(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "one\n")
	e.ok("save")
	e.holdLock() // as the server does
	endpoint := localsock.Endpoint(e.store)
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: endpoint}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil { // a server that accepts nothing, with the least backlog
		t.Fatal(err)
	}
	for full := false; !full; {
		c, err := net.Dial("unix", endpoint)
		switch {
		case errors.Is(err, syscall.EAGAIN):
			full = true
		case err != nil:
			t.Fatalf("filling the server's backlog: %v", err)
		default:
			defer c.Close()
		}
	}
	r := e.run("", "--lock-timeout", "20s", "list")
	if r.code != protocol.ExitError || !strings.Contains(r.stderr, "cannot reach the server of store "+e.store) ||
		!strings.Contains(r.stderr, syscall.EAGAIN.Error()) {
		t.Fatalf("list with an unreachable server: exit %d, stderr %q; want %d naming the server and EAGAIN", r.code, r.stderr, protocol.ExitError)
	}
}
