package main

import (
	"context"
	"fmt"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/engine"
)

func (a *app) listCommand() *cobra.Command {
	var roots []string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the task's checkpoints, oldest first, head marked",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withEngine(cmd, func(e *engine.Engine) error {
				log, err := e.List(cmd.Context(), a.task)
				if err != nil {
					return err
				}
				if len(roots) > 0 {
					if log, err = changedIn(cmd.Context(), e, log, roots); err != nil {
						return err
					}
				}
				a.printLog(log)
				return nil
			})
		},
	}
	addRootFlag(cmd, &roots, "list the checkpoints that changed")
	return cmd
}

// changedIn keeps the checkpoints of log that changed a file of roots.
func changedIn(ctx context.Context, e *engine.Engine, log *engine.Log, roots []string) (*engine.Log, error) {
	paths, err := rootPaths(e, roots)
	if err != nil {
		return nil, err
	}
	h, err := e.History(ctx, engine.HistoryOptions{Task: log.Task, Paths: paths})
	if err != nil {
		return nil, err
	}
	changed := map[engine.ID]bool{}
	for _, ent := range h.Entries {
		changed[ent.Checkpoint.ID] = true
	}
	out := *log
	out.Checkpoints = slices.DeleteFunc(slices.Clone(log.Checkpoints), func(c engine.CheckpointInfo) bool { return !changed[c.ID] })
	return &out, nil
}

func (a *app) printLog(log *engine.Log) {
	if a.json {
		a.printJSON(protocol.LogView(log))
		return
	}
	if a.quiet {
		return
	}
	if len(log.Checkpoints) == 0 {
		fmt.Fprintf(a.stdout, "task %s has no checkpoints; run `ckpt save`\n", log.Task)
		return
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\tSEQ\tID\tTIME\tKIND\tCHANGES\tMESSAGE")
	for _, c := range log.Checkpoints {
		mark := ""
		if c.Head {
			mark = "*"
		}
		fmt.Fprintf(tw, "%s\t@%d\t%s\t%s\t%s\t+%d ~%d -%d\t%s\n", mark, c.Seq, c.ID.Short(),
			c.Time.Local().Format(time.DateTime), c.Kind, c.Stats.Added, c.Stats.Modified, c.Stats.Deleted, subject(c.Message))
	}
	tw.Flush()
}

func (a *app) tasksCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "tasks",
		Short: "List the store's tasks",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withEngine(cmd, func(e *engine.Engine) error {
				tasks, err := e.Tasks(cmd.Context())
				if err != nil {
					return err
				}
				st, auto := e.AutoPushStatus()
				if !auto {
					a.printTasks(tasks, nil)
					return nil
				}
				a.printTasks(tasks, &st)
				return nil
			})
		},
	}
}

// printTasks prints the tasks, and the automatic push's state when auto
// is set (a server started with --push runs the command).
func (a *app) printTasks(tasks []engine.TaskInfo, auto *engine.AutoPushStatus) {
	if a.json {
		a.printJSON(protocol.TasksAutoJSON{Tasks: protocol.TasksView(tasks)["tasks"], AutoPush: protocol.AutoPushView(auto)})
		return
	}
	if a.quiet {
		return
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tCHECKPOINTS\tHEAD\tFIRST\tLAST\tONLY IN TASK")
	for _, t := range tasks {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", t.Name, t.Checkpoints, t.Head.Short(),
			t.First.Local().Format(time.DateTime), t.Last.Local().Format(time.DateTime), humanBytes(t.ExclusiveBytes))
	}
	tw.Flush()
	if auto != nil {
		a.say("%s", autoPushLine(auto))
	}
}
