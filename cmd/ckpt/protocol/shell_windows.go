package protocol

import (
	"context"
	"os/exec"
	"syscall"
)

// shellCommand runs command through cmd.exe, the line passed as typed.
func shellCommand(ctx context.Context, command string) *exec.Cmd {
	c := exec.CommandContext(ctx, "cmd.exe")
	c.SysProcAttr = &syscall.SysProcAttr{CmdLine: `cmd.exe /d /s /c "` + command + `"`}
	return c
}

// endCommand does nothing on Windows, where cmd.exe alone is ended.
func endCommand(*exec.Cmd) {}
