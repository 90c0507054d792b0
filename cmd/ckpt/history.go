package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/engine"
)

func (a *app) logCommand() *cobra.Command {
	var all, patch bool
	var roots []string
	cmd := &cobra.Command{
		Use:   "log [PATH...]",
		Short: "List the checkpoints in which PATH (a file or directory) changed, newest first",
		Long: "Compares each checkpoint of the task (or of every task with --all) with its parent along the\n" +
			"paths given and lists those in which something under them was added, modified, deleted or\n" +
			"renamed, with the size change and the message. -p prints each one's patch.",
		RunE: func(cmd *cobra.Command, paths []string) error {
			return a.withEngine(cmd, func(e *engine.Engine) error {
				paths, err := withRoots(e, roots, paths)
				if err != nil {
					return err
				}
				h, err := e.History(cmd.Context(), engine.HistoryOptions{Task: a.task, All: all, Paths: paths})
				if err != nil {
					return err
				}
				return a.printHistory(h, patch)
			})
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "search every task")
	addRootFlag(cmd, &roots, "search")
	cmd.Flags().BoolVarP(&patch, "patch", "p", false, "print each checkpoint's patch of the paths")
	return cmd
}

func (a *app) printHistory(h *engine.History, patch bool) error {
	if a.json {
		a.printJSON(protocol.HistoryView(h))
		return nil
	}
	if a.quiet {
		return nil
	}
	for _, e := range h.Entries {
		c := e.Checkpoint
		fmt.Fprintf(a.stdout, "@%d %s %s  %s  %s\n", c.Seq, c.ID.Short(), c.Task, c.Time.Local().Format(time.DateTime), subject(c.Message))
		for _, ch := range e.Diff.Changes {
			name := engine.QuotePath(ch.Path)
			if ch.OldPath != "" {
				name = engine.QuotePath(ch.OldPath) + " -> " + name
			}
			fmt.Fprintf(a.stdout, "    %-8s %s (%s)\n", ch.Status, name, sizeChange(ch))
		}
		if patch {
			if err := e.Diff.WritePatch(a.stdout, engine.DiffFormat{Color: a.colour}); err != nil {
				return err
			}
		}
	}
	return nil
}

// sizeChange describes a change's size: "+120 B", "-3 B" or "1.2 KiB -> 1.5 KiB".
func sizeChange(c engine.Change) string {
	before, after := protocol.SideSize(c.Before), protocol.SideSize(c.After)
	switch {
	case before < 0:
		return "+" + humanBytes(after)
	case after < 0:
		return "-" + humanBytes(before)
	}
	return humanBytes(before) + " -> " + humanBytes(after)
}
