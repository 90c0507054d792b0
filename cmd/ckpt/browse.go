package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/engine"
)

func (a *app) showCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "show REF",
		Short: "Show one checkpoint",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withEngine(cmd, func(e *engine.Engine) error {
				c, err := e.Show(cmd.Context(), a.task, args[0])
				if err != nil {
					return err
				}
				a.printShow(c)
				return nil
			})
		},
	}
}

func (a *app) printShow(c engine.CheckpointInfo) {
	if a.json {
		a.printJSON(protocol.CheckpointView(c))
		return
	}
	if a.quiet {
		return
	}
	head := ""
	if c.Head {
		head = " (head)"
	}
	fmt.Fprintf(a.stdout, "checkpoint %s%s\ntask:    %s @%d\nkind:    %s\ntime:    %s\nparent:  %s\nroot:    %s\n",
		c.ID, head, c.Task, c.Seq, c.Kind, c.Time.Local().Format(time.RFC3339), c.Parent.Text(), c.Root)
	fmt.Fprintf(a.stdout, "changes: +%d ~%d -%d (%d files)\n", c.Stats.Added, c.Stats.Modified, c.Stats.Deleted, c.Stats.Files)
	if !c.State.IsZero() {
		fmt.Fprintf(a.stdout, "state:   %s\n", c.State)
	}
	keys := make([]string, 0, len(c.Meta))
	for k := range c.Meta {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(a.stdout, "meta:    %s=%s\n", k, c.Meta[k])
	}
	if c.Message != "" {
		fmt.Fprintf(a.stdout, "\n    %s\n", strings.ReplaceAll(c.Message, "\n", "\n    "))
	}
}

func (a *app) lsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "ls REF [PATH]",
		Short: "List a directory of a checkpoint",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := ""
			if len(args) == 2 {
				dir = args[1]
			}
			return a.withEngine(cmd, func(e *engine.Engine) error {
				dir, err := workspacePath(e, dir)
				if err != nil {
					return err
				}
				entries, err := e.Ls(cmd.Context(), a.task, args[0], dir)
				if err != nil {
					return err
				}
				a.printLs(entries)
				return nil
			})
		},
	}
}

func (a *app) printLs(entries []engine.LsEntry) {
	if a.json {
		a.printJSON(protocol.LsView(entries))
		return
	}
	if a.quiet {
		return
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	for _, e := range entries {
		name := e.Path
		if e.IsDir() {
			name += "/"
		}
		name = engine.QuotePath(name)
		fmt.Fprintf(tw, "%04o\t%s\t%d\t%s\t %s\n", e.Mode, e.Kind, e.Size, e.ID.Short(), name)
	}
	tw.Flush()
}

func (a *app) catCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "cat REF PATH",
		Short: "Print a file as it was in a checkpoint",
		Long: "Cat prints the file's bytes as they are; with --json, one document holding them\n" +
			"(content when they are valid UTF-8, else content_base64), as the cat method's result.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withEngine(cmd, func(e *engine.Engine) error {
				file, err := workspacePath(e, args[1])
				if err != nil {
					return err
				}
				rc, size, err := e.Cat(cmd.Context(), a.task, args[0], file)
				if err != nil {
					return err
				}
				defer rc.Close()
				if !a.json {
					_, err = io.Copy(a.stdout, rc)
					return err
				}
				b, err := io.ReadAll(rc)
				if err != nil {
					return fmt.Errorf("read %q: %w", file, err)
				}
				a.printJSON(protocol.CatView(file, size, b))
				return nil
			})
		},
	}
}
