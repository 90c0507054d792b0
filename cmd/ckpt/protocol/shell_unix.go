//go:build !windows

package protocol

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/ckpt/ckpt/internal/osfs"
)

// killGrace is how long a cancelled command's process group has between
// SIGTERM and SIGKILL to clean up.
const killGrace = 2 * time.Second

// shellCommand runs command through /bin/sh, with the user's umask (not
// the private one the CLI keeps for the store's files: what the command
// builds is the user's). Away from a terminal (a server, a pipeline) it
// runs in a process group of its own, which a cancellation ends whole
// (SIGTERM, then SIGKILL after killGrace) and runShell ends too, so that
// nothing the command started is left running. At a terminal it stays in
// the terminal's foreground group: Ctrl-C reaches it and all it started
// as it would without ckpt, and a prompt it reads from the terminal (ssh,
// sudo) works, where a group of its own would be stopped by the read.
func shellCommand(ctx context.Context, command string) *exec.Cmd {
	if perm, ok := osfs.UserPerm(0o777); ok {
		command = fmt.Sprintf("umask %03o; %s", 0o777&^perm, command)
	}
	c := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	if term.IsTerminal(int(os.Stdin.Fd())) {
		return c
	}
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error {
		group := -c.Process.Pid
		time.AfterFunc(killGrace, func() { syscall.Kill(group, syscall.SIGKILL) })
		return syscall.Kill(group, syscall.SIGTERM)
	}
	// A process that left the group and holds the output open does not
	// keep the bisect waiting past the grace.
	c.WaitDelay = 2 * killGrace
	return c
}

// runShell runs c, made by shellCommand, and then ends what it left
// running when it exited in a group of its own (a server it started for
// the test).
func runShell(c *exec.Cmd) error {
	err := c.Run()
	if c.SysProcAttr != nil && c.SysProcAttr.Setpgid && c.Process != nil {
		syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	}
	return err
}
