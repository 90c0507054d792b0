package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/engine"
)

func (a *app) diffCommand() *cobra.Command {
	var (
		stat, nameStatus, exitCode bool
		mode                       string
		roots                      []string
	)
	cmd := &cobra.Command{
		Use:   "diff [REF [REF]] [-- PATH...]",
		Short: "Show changes between checkpoints, or a checkpoint and the workspace",
		Long: "With no ref: HEAD against the workspace. With one ref: that checkpoint against the workspace.\n" +
			"With two: the first against the second, which may be the word workspace.\n" +
			"--mode checkpoint|from-init|to-current|full picks the range from the task's history.",
		RunE: func(cmd *cobra.Command, args []string) error {
			refs, paths := pathsAfterDash(cmd, args)
			if len(refs) > 2 {
				return protocol.UsageError("diff takes at most two refs")
			}
			if len(refs) == 2 && refs[0] == engine.WorkspaceRef && refs[1] != engine.WorkspaceRef {
				return protocol.UsageError(fmt.Sprintf("the workspace can be only the second ref: ckpt diff %s workspace shows the change the other way", refs[1]))
			}
			if stat && nameStatus {
				return protocol.UsageError("--stat and --name-status: give one")
			}
			from, to, err := diffRefs(engine.DiffMode(mode), refs)
			if err != nil {
				return err
			}
			return a.withEngine(cmd, func(e *engine.Engine) error {
				paths, err := withRoots(e, roots, paths)
				if err != nil {
					return err
				}
				res, err := e.Diff(cmd.Context(), from, to, engine.DiffOptions{Task: a.task, Paths: paths, Mode: engine.DiffMode(mode), Capture: a.capture})
				if err != nil {
					return err
				}
				if exitCode && len(res.Changes) > 0 {
					a.exitCode = protocol.ExitError
				}
				return a.printDiff(res, stat, nameStatus)
			})
		},
	}
	cmd.Flags().BoolVar(&stat, "stat", false, "print a diffstat")
	addRootFlag(cmd, &roots, "compare")
	cmd.Flags().BoolVar(&nameStatus, "name-status", false, "print the status and path of each change")
	cmd.Flags().BoolVar(&exitCode, "exit-code", false, "exit 1 when there are differences")
	cmd.Flags().StringVar(&mode, "mode", "", "checkpoint, from-init, to-current or full")
	return cmd
}

// diffRefs turns the positional refs (and --mode) into Diff's from and to:
// with a mode, from is the mode's REF and to is empty.
func diffRefs(mode engine.DiffMode, refs []string) (from, to string, err error) {
	if mode != "" {
		switch mode {
		case engine.ModeCheckpoint, engine.ModeFromInit, engine.ModeToCurrent, engine.ModeFull:
		default:
			return "", "", protocol.UsageError(fmt.Sprintf("--mode %q: want checkpoint, from-init, to-current or full", mode))
		}
		if len(refs) > 1 || (len(refs) == 0 && mode != engine.ModeFull) {
			return "", "", protocol.UsageError("--mode takes exactly one ref (none for full)")
		}
		if len(refs) == 1 {
			from = refs[0]
		}
		return from, "", nil
	}
	switch len(refs) {
	case 0:
		return "HEAD", engine.WorkspaceRef, nil
	case 1:
		return refs[0], engine.WorkspaceRef, nil
	}
	return refs[0], refs[1], nil
}

func (a *app) printDiff(res *engine.DiffResult, stat, nameStatus bool) error {
	format := engine.DiffFormat{Color: a.colour}
	switch {
	case a.json:
		doc, err := protocol.EncodeDiff(res, format)
		if err != nil {
			return err
		}
		a.printJSONDoc(doc)
		return nil
	case a.quiet:
		return nil
	case stat:
		return res.WriteStat(a.stdout, format)
	case nameStatus:
		return res.WriteNameStatus(a.stdout)
	}
	return res.WritePatch(a.stdout, format)
}
