package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/osfs"
)

func (a *app) restoreCommand() *cobra.Command {
	var (
		only     string
		stateOut string
		opts     engine.RestoreOptions
		roots    []string
	)
	cmd := &cobra.Command{
		Use:   "restore REF [-- PATH...]",
		Short: "Rewind the workspace, the host's state, or both, to a checkpoint",
		Long: "Restore saves a backup checkpoint of the current state first (unless --no-backup),\n" +
			"then writes only the files that differ. Files not captured by any checkpoint are never\n" +
			"touched; where one stands in the way it is reported as a conflict (--force overwrites).\n" +
			"With --no-backup, files the task's head does not capture as they are now (unsaved edits,\n" +
			"new files) are conflicts too. A path the restore may not change is a conflict and the rest\n" +
			"is restored. Conflicts exit 6 and are listed (in --json too); the head still moves to REF,\n" +
			"so the next save records the conflicting paths as changes. A restore that is interrupted\n" +
			"is completed by the next command that may write.",
		RunE: func(cmd *cobra.Command, args []string) error {
			refs, paths := pathsAfterDash(cmd, args)
			if len(refs) != 1 {
				return protocol.UsageError("restore takes exactly one ref")
			}
			opts.Task, opts.Only, opts.Paths = a.task, engine.Only(only), paths
			switch opts.Only {
			case engine.OnlyWorkspace, engine.OnlyState, engine.OnlyBoth:
			default:
				return fmt.Errorf("%w: --only must be workspace, state or both, not %q", engine.ErrBadRequest, only)
			}
			if err := a.checkOnlyState(opts, roots, stateOut); err != nil {
				return err // before any change, and before a pending restore is settled
			}
			return a.withEngine(cmd, func(e *engine.Engine) error {
				var err error
				if opts.Paths, err = withRoots(e, roots, opts.Paths); err != nil {
					return err
				}
				if err := a.checkStateOut(stateOut, opts); err != nil {
					return err // before any change
				}
				opts.Capture = a.capture // set by the engine's open, through a server
				res, err := e.Restore(cmd.Context(), refs[0], opts)
				if err != nil {
					return err
				}
				state, err := a.writeState(cmd.Context(), e, res, stateOut, opts)
				if err != nil {
					return err
				}
				switch {
				case state != nil && a.json: // the one document on stdout holds the state
					a.printJSON(struct {
						protocol.RestoreJSON
						protocol.StateJSON
					}{protocol.RestoreView(res, opts.DryRun), protocol.StateView(state)})
				case state != nil: // stdout holds only the state: the summary goes to stderr
					stdout := a.stdout
					a.stdout = a.stderr
					a.printRestore(res, opts.DryRun)
					a.stdout = stdout
				default:
					a.printRestore(res, opts.DryRun)
				}
				if len(res.Conflicts) > 0 && !opts.DryRun {
					a.exitCode = protocol.ExitConflicts
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	addRootFlag(cmd, &roots, "restore (as paths do: the head stays)")
	f.StringVar(&only, "only", string(engine.OnlyWorkspace), "what to rewind: workspace, state or both")
	f.StringVar(&stateOut, "state-out", "", "write the checkpoint's state blob to FILE (- for stdout, which then holds only the blob; the summary goes to stderr, and with --json the document holds it). --only state and both need it, unless --json: the document then holds the blob")
	f.BoolVar(&opts.DryRun, "dry-run", false, "show what would change, change nothing")
	f.BoolVar(&opts.NoBackup, "no-backup", false, "do not save a backup checkpoint first")
	f.BoolVar(&opts.Force, "force", false, "overwrite files not captured by any checkpoint that stand in the way")
	return cmd
}

// checkOnlyState refuses, as usage errors, a restore of the state that
// would not deliver it, or would do nothing a user could see: --only state
// or both without --state-out, which delivers the state (under --json the
// document holds it, as the JSON-RPC and MCP results do), and --only state
// with paths or --root, which name files it leaves alone.
func (a *app) checkOnlyState(opts engine.RestoreOptions, roots []string, stateOut string) error {
	if opts.Only == engine.OnlyWorkspace {
		return nil
	}
	if opts.Only == engine.OnlyState && (len(opts.Paths) > 0 || len(roots) > 0) {
		return protocol.UsageError("--only state restores no files: give it no paths and no --root (--only both restores the state and those paths' files)")
	}
	if stateOut == "" && !a.json {
		return protocol.UsageError(fmt.Sprintf("--only %s needs --state-out FILE (or - for stdout) to deliver the state (--only workspace restores the files alone)", opts.Only))
	}
	return nil
}

// checkStateOut fails, before the restore changes anything, for a
// --state-out FILE that surely cannot be written: one in a directory that
// does not exist, a directory itself, an existing file this process may
// not write, or a new one in a directory where it may not create files.
// It creates nothing (a FILE in the workspace would be captured by the
// backup, and removed by the restore).
func (a *app) checkStateOut(out string, opts engine.RestoreOptions) error {
	if out == "" || out == "-" || opts.DryRun || opts.Only == engine.OnlyWorkspace {
		return nil
	}
	// Through a server, a relative FILE names a file in the client's directory.
	path := a.localPath(out)
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return fmt.Errorf("write state: %s is a directory", path)
	case err == nil:
		err = osfs.CheckWritable(path)
	default:
		dir := filepath.Dir(path)
		var di os.FileInfo
		if di, err = os.Stat(dir); err == nil && !di.IsDir() {
			err = fmt.Errorf("%s is not a directory", dir)
		} else if err == nil {
			err = osfs.CheckWritable(dir)
		}
	}
	if err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	return nil
}

// writeState delivers the state blob for --only state|both to FILE, or
// with "-" returns it, for stdout (written here unless --json, whose
// document holds it); without --state-out under --json it returns it for
// the document too, nil when the checkpoint has none (as the JSON-RPC
// and MCP results hold it); nil otherwise.
func (a *app) writeState(ctx context.Context, e *engine.Engine, res *engine.RestoreResult, out string, opts engine.RestoreOptions) ([]byte, error) {
	if out == "" && !a.json || opts.DryRun || opts.Only == engine.OnlyWorkspace {
		return nil, nil
	}
	if out == "" && res.State.IsZero() {
		return nil, nil
	}
	state, err := e.ReadState(ctx, res.State)
	if err != nil {
		return nil, err
	}
	if out == "" {
		if state == nil {
			state = []byte{} // the checkpoint has a state: an empty one
		}
		return state, nil
	}
	if out == "-" {
		if state == nil {
			state = []byte{}
		}
		if !a.json {
			_, err = a.stdout.Write(state)
		}
		return state, err
	}
	if err := os.WriteFile(a.localPath(out), state, 0o600); err != nil {
		return nil, fmt.Errorf("write state: %w", err)
	}
	return nil, nil
}

func (a *app) printRestore(res *engine.RestoreResult, dryRun bool) {
	if a.json {
		a.printJSON(protocol.RestoreView(res, dryRun))
		return
	}
	for _, c := range res.Conflicts {
		fmt.Fprintf(a.stderr, "ckpt: conflict: %s: %s\n", c.Path, protocol.ConflictReason(c))
	}
	a.printDiscarded(res.Discarded, dryRun)
	verb := "restored"
	if dryRun {
		verb = "would restore"
		for _, p := range res.Written {
			a.say("write  %s", p)
		}
		for _, p := range res.Deleted {
			a.say("delete %s", p)
		}
	}
	backup := ""
	if !res.Backup.IsZero() {
		backup = fmt.Sprintf("; backup %s (undo: ckpt restore %s)", res.Backup.Short(), res.Backup.Short())
	}
	a.say("%s %s: %d written, %d deleted, %s%s", verb, res.Restored.Short(),
		len(res.Written), len(res.Deleted), conflictCount(len(res.Conflicts)), backup)
}

// discardedShown is how many discarded paths a restore names on stderr;
// --json lists them all.
const discardedShown = 20

// printDiscarded names on stderr what --force destroyed (or would) that no
// checkpoint holds, so no undo brings it back.
func (a *app) printDiscarded(paths []string, dryRun bool) {
	verb := "discarded"
	if dryRun {
		verb = "would discard"
	}
	for i, p := range paths {
		if i == discardedShown {
			fmt.Fprintf(a.stderr, "ckpt: %s %d more paths in no checkpoint (--json lists them)\n", verb, len(paths)-i)
			break
		}
		fmt.Fprintf(a.stderr, "ckpt: %s, in no checkpoint: %s\n", verb, p)
	}
}

// conflictCount is "1 conflict" or "n conflicts".
func conflictCount(n int) string {
	if n == 1 {
		return "1 conflict"
	}
	return fmt.Sprintf("%d conflicts", n)
}
