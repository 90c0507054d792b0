//go:build !windows

package protocol

import (
	"context"
	"fmt"
	"os/exec"
	"syscall"
	"time"

	"github.com/ckpt/ckpt/internal/osfs"
)

// shellCommand runs command through /bin/sh, with the user's umask (not
// the private one the CLI keeps for the store's files: what the command
// builds is the user's), in a process group of its own, which a
// cancellation kills whole: nothing the command started is left running
// (a test's server, its build's workers).
func shellCommand(ctx context.Context, command string) *exec.Cmd {
	if perm, ok := osfs.UserPerm(0o777); ok {
		command = fmt.Sprintf("umask %03o\n%s", 0o777&^perm, command)
	}
	c := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	// A process that left the group and holds the output open does not
	// keep the bisect waiting.
	c.WaitDelay = 5 * time.Second
	return c
}
