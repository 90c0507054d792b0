package protocol

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"

	"github.com/ckpt/ckpt/engine"
)

// CommandTest is a bisect test that runs command through the system's
// shell in the scratch directory, as git bisect run does: exit 0 is good,
// 125 skip, 1–127 bad; a command that cannot start, is killed or exits
// above 127 stops the bisect. The checkpoint's id and @N are in
// CKPT_BISECT_CHECKPOINT and CKPT_BISECT_SEQ, its other variables those
// of ctx's environment (WithEnvironment: a server runs it with its
// client's, as the command would run cold), else the process's. Its output
// goes to stdout and stderr (nil: discarded).
func CommandTest(command string, stdout, stderr io.Writer) func(context.Context, string, engine.CheckpointInfo) (engine.BisectVerdict, error) {
	return func(ctx context.Context, dir string, cp engine.CheckpointInfo) (engine.BisectVerdict, error) {
		c := shellCommand(ctx, command)
		c.Dir, c.Stdout, c.Stderr = dir, stdout, stderr
		c.Env = append(environ(ctx), "CKPT_BISECT_CHECKPOINT="+cp.ID.String(), fmt.Sprintf("CKPT_BISECT_SEQ=%d", cp.Seq))
		err := runShell(c)
		if errors.Is(err, exec.ErrWaitDelay) && c.ProcessState != nil {
			// The command ended; something it started held its output: its
			// exit status is the verdict.
			err = nil
			if !c.ProcessState.Success() {
				err = &exec.ExitError{ProcessState: c.ProcessState}
			}
		}
		var exit *exec.ExitError
		switch {
		case err == nil:
			return engine.BisectGood, nil
		case !errors.As(err, &exit) || ctx.Err() != nil:
			return 0, fmt.Errorf("bisect: run %q: %w", command, err)
		case exit.ExitCode() == 125:
			return engine.BisectSkip, nil
		case exit.ExitCode() > 0 && exit.ExitCode() < 128:
			return engine.BisectBad, nil
		}
		return 0, fmt.Errorf("bisect: %q at @%d: %v: stopping", command, cp.Seq, exit)
	}
}
