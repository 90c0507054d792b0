package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ckpt/ckpt/engine"
)

// checkpointJSON is one checkpoint in list and show output.
type checkpointJSON struct {
	ID      string            `json:"id"`
	Seq     uint64            `json:"seq"`
	Parent  string            `json:"parent"`
	Task    string            `json:"task"`
	Time    time.Time         `json:"time"`
	Message string            `json:"message"`
	Kind    string            `json:"kind"`
	Empty   bool              `json:"empty"`
	Head    bool              `json:"head"`
	Meta    map[string]string `json:"meta"`
	Root    string            `json:"root"`
	State   string            `json:"state,omitempty"`
	Stats   statsJSON         `json:"stats"`
}

func toCheckpointJSON(c engine.CheckpointInfo) checkpointJSON {
	meta := c.Meta
	if meta == nil {
		meta = map[string]string{}
	}
	return checkpointJSON{
		ID: c.ID.String(), Seq: c.Seq, Parent: c.Parent.Text(), Task: c.Task, Time: c.Time,
		Message: c.Message, Kind: string(c.Kind), Empty: c.Empty, Head: c.Head, Meta: meta,
		Root: c.Root.String(), State: c.State.Text(),
		Stats: statsJSON{Files: c.Stats.Files, Added: c.Stats.Added, Modified: c.Stats.Modified,
			Deleted: c.Stats.Deleted, BytesHashed: c.Stats.BytesHashed, DurationMs: c.Stats.Duration.Milliseconds()},
	}
}

func (a *app) listCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the task's checkpoints, oldest first, head marked",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withEngine(cmd, func(e *engine.Engine) error {
				log, err := e.List(cmd.Context(), a.task)
				if err != nil {
					return err
				}
				a.printLog(log)
				return nil
			})
		},
	}
}

// logJSON is the list command's JSON shape.
type logJSON struct {
	Task        string           `json:"task"`
	Head        string           `json:"head"`
	Checkpoints []checkpointJSON `json:"checkpoints"`
}

func logView(log *engine.Log) logJSON {
	out := logJSON{Task: log.Task, Head: log.Head.Text(), Checkpoints: make([]checkpointJSON, 0, len(log.Checkpoints))}
	for _, c := range log.Checkpoints {
		out.Checkpoints = append(out.Checkpoints, toCheckpointJSON(c))
	}
	return out
}

func (a *app) printLog(log *engine.Log) {
	if a.json {
		a.printJSON(logView(log))
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
			c.Time.Local().Format(time.DateTime), c.Kind, c.Stats.Added, c.Stats.Modified, c.Stats.Deleted, c.Message)
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

// taskJSON is one task in the tasks command's JSON shape.
type taskJSON struct {
	Name        string    `json:"name"`
	Head        string    `json:"head"`
	Checkpoints int       `json:"checkpoints"`
	First       time.Time `json:"first"`
	Last        time.Time `json:"last"`
	Exclusive   int64     `json:"exclusive_bytes"`
}

func tasksView(tasks []engine.TaskInfo) map[string][]taskJSON {
	out := make([]taskJSON, 0, len(tasks))
	for _, t := range tasks {
		out = append(out, taskJSON{Name: t.Name, Head: t.Head.Text(), Checkpoints: t.Checkpoints, First: t.First, Last: t.Last,
			Exclusive: t.ExclusiveBytes})
	}
	return map[string][]taskJSON{"tasks": out}
}

// printTasks prints the tasks, and the automatic push's state when auto
// is set (a server started with --push runs the command).
func (a *app) printTasks(tasks []engine.TaskInfo, auto *engine.AutoPushStatus) {
	if a.json {
		a.printJSON(tasksAutoJSON{Tasks: tasksView(tasks)["tasks"], AutoPush: autoPushView(auto)})
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
