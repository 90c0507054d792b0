package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/engine"
)

func (a *app) bisectCommand() *cobra.Command {
	var run, good, bad, dir string
	cmd := &cobra.Command{
		Use:   "bisect --run CMD [--good REF] [--bad REF]",
		Short: "Find the first checkpoint at which CMD fails, without touching the workspace",
		Long: "Binary-searches the task's checkpoints from --good (default: the first) to --bad (default: the\n" +
			"head), exporting each tested one into a scratch directory (--dir, rewritten by difference at each\n" +
			"step) and running CMD there through the shell: exit 0 is good, 125 cannot test, 1-127 bad.\n" +
			"Prints the first bad checkpoint, its message and its diff from the one before. An end left to\n" +
			"its default is tested first; if the head passes (or the first checkpoint fails) there is\n" +
			"nothing to bisect (exit 1).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if run == "" {
				return protocol.UsageError("bisect needs --run CMD")
			}
			return a.withEngine(cmd, func(e *engine.Engine) error {
				opts := engine.BisectOptions{Task: a.task, Good: good, Bad: bad, Test: protocol.CommandTest(run, a.stderr, a.stderr)}
				if dir != "" {
					opts.Dir = a.localPath(dir)
				}
				res, err := e.Bisect(cmd.Context(), opts)
				if err != nil {
					return err
				}
				return a.printBisect(res)
			})
		},
	}
	cmd.Flags().StringVar(&run, "run", "", "shell command to run in each tested checkpoint")
	cmd.Flags().StringVar(&good, "good", "", "a checkpoint without the problem (default: the task's first)")
	cmd.Flags().StringVar(&bad, "bad", "", "a checkpoint with the problem (default: the head)")
	cmd.Flags().StringVar(&dir, "dir", "", "scratch directory (must not exist or be empty; default: a temporary one)")
	return cmd
}

func (a *app) printBisect(res *engine.BisectResult) error {
	if a.json {
		a.printJSON(protocol.BisectView(res))
		return nil
	}
	if a.quiet {
		return nil
	}
	for _, s := range res.Steps {
		fmt.Fprintf(a.stdout, "tested @%d %s: %s\n", s.Checkpoint.Seq, s.Checkpoint.ID.Short(), s.Verdict)
	}
	if len(res.Candidates) > 0 {
		fmt.Fprintf(a.stdout, "skipped checkpoints hide which came first; the first bad is one of:\n")
		for _, k := range res.Candidates {
			fmt.Fprintf(a.stdout, "  @%d %s %s\n", k.Seq, k.ID.Short(), subject(k.Message))
		}
		return nil
	}
	c := res.FirstBad
	fmt.Fprintf(a.stdout, "first bad checkpoint: @%d %s %s\n", c.Seq, c.ID.Short(), subject(c.Message))
	return res.Diff.WritePatch(a.stdout, engine.DiffFormat{Color: a.colour})
}
