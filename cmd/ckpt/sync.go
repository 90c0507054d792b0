package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/osfs"
)

func (a *app) remoteCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "remote",
		Short: "Name the object stores (s3://bucket/prefix, file:///dir) that push and pull use",
		Long: "remote add NAME URL records a remote in the store; remote list and remote remove NAME.\n" +
			"Credentials are never stored: s3:// remotes take AWS_ENDPOINT_URL, AWS_REGION,\n" +
			"AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_PROFILE from the environment.\n" +
			"remote add --key-file FILE (or --passphrase-env VAR, or --new-key FILE) encrypts everything\n" +
			"pushed; the store records the file's path or the variable's name, never the key.",
		Args: cobra.NoArgs,
	}
	var force bool
	remove := &cobra.Command{
		Use: "remove NAME", Short: "Forget a remote (nothing on it is touched)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withEngine(cmd, func(e *engine.Engine) error {
				if err := e.RemoveRemote(cmd.Context(), args[0], force); err != nil {
					if errors.Is(err, engine.ErrBadRequest) && !force && knownRemote(cmd.Context(), e, args[0]) {
						return fmt.Errorf("%w (restore what you need first, or pass --force)", err)
					}
					return err
				}
				a.printOrSay(map[string]string{"removed": args[0]}, "removed remote %s", args[0])
				return nil
			})
		},
	}
	remove.Flags().BoolVar(&force, "force", false, "forget it even if some pulled blobs were never fetched from it")
	cmd.AddCommand(a.remoteAddCommand(), &cobra.Command{
		Use: "list", Short: "List the remotes", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withEngine(cmd, func(e *engine.Engine) error {
				rs, err := e.Remotes(cmd.Context())
				if err != nil {
					return err
				}
				out := protocol.RemotesJSON{Remotes: []protocol.RemoteJSON{}}
				for _, r := range rs {
					out.Remotes = append(out.Remotes, protocol.RemoteView(r))
					a.say("%s\t%s%s", r.Name, r.URL, keyingText(r.Key))
				}
				if a.json {
					a.printJSON(out)
				}
				return nil
			})
		},
	}, remove, a.keygenCommand())
	return cmd
}

// remoteAddCommand is `ckpt remote add NAME URL`. It opens the remote
// first, so a bad URL or, for an encrypted remote, a wrong key fails
// before anything is recorded.
func (a *app) remoteAddCommand() *cobra.Command {
	var kf keyFlags
	cmd := &cobra.Command{
		Use: "add NAME URL", Short: "Record a remote", Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			key, err := kf.key(a.localPath)
			if err != nil {
				return err
			}
			r := engine.RemoteInfo{Name: args[0], URL: args[1], Key: key}
			b, err := protocol.OpenRemote(cmd.Context(), r)
			if err != nil {
				return err
			}
			b.Close()
			return a.withEngine(cmd, func(e *engine.Engine) error {
				if key.Encrypted() {
					err = e.AddEncryptedRemote(cmd.Context(), r.Name, r.URL, key)
				} else {
					err = e.AddRemote(cmd.Context(), r.Name, r.URL)
				}
				if err != nil {
					return err
				}
				a.printOrSay(protocol.RemoteView(r), "added remote %s %s%s", r.Name, r.URL, keyingText(key))
				return nil
			})
		},
	}
	kf.register(cmd, true)
	return cmd
}

// printOrSay prints v under --json, the sentence otherwise.
func (a *app) printOrSay(v any, format string, args ...any) {
	if a.json {
		a.printJSON(v)
		return
	}
	a.say(format, args...)
}

// syncProgress draws a push's, pull's or clone's phases on the progress
// line, or is nil when no line is drawn.
func (a *app) syncProgress(verb string) func(engine.SyncProgress) {
	p := a.progress
	if p == nil {
		return nil
	}
	return func(sp engine.SyncProgress) {
		switch {
		case sp.Phase == "upload" || sp.Phase == "fetch":
			p.draw(fmt.Sprintf("ckpt %s: %s %s/%s", verb, sp.Phase, humanBytes(sp.Done), humanBytes(sp.Total)))
		case sp.Total > 0:
			p.draw(fmt.Sprintf("ckpt %s: %s %d/%d", verb, sp.Phase, sp.Done, sp.Total))
		default:
			p.draw(fmt.Sprintf("ckpt %s: %s", verb, sp.Phase))
		}
	}
}

func (a *app) pushCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "push [REMOTE]",
		Short: "Upload the task's checkpoints the remote lacks (default remote: origin)",
		Long: "push uploads data, then metadata, then the task's head with a conditional write. A push cut\n" +
			"short and run again uploads nothing twice. When another machine pushed the same task since\n" +
			"this store last synced, the remote's task is left alone and this store's history is pushed\n" +
			"as a new task TASK~ID (reported), so both are kept.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withEngine(cmd, func(e *engine.Engine) error {
				view, res, err := protocol.RunPush(cmd.Context(), e, args, a.task, a.syncProgress("push"))
				if err != nil {
					return err
				}
				a.progress.clear()
				if a.json {
					a.printJSON(view)
					return nil
				}
				switch {
				case res.Forked != "":
					fmt.Fprintf(a.stderr, "ckpt: task %s on %s moved on elsewhere; this store's history was pushed as task %s\n", a.task, view.Remote, res.Forked)
				case res.UpToDate:
					a.say("%s is up to date with task %s", view.Remote, res.Task)
					return nil
				case res.Behind:
					a.say("%s has saved further on task %s; nothing to push (`ckpt pull` brings it)", view.Remote, res.Task)
					return nil
				}
				a.say("pushed task %s to %s: %d checkpoints, %s in %d requests", res.Task, view.Remote, res.Checkpoints,
					humanBytes(res.Traffic.BytesUp), res.Traffic.Puts+res.Traffic.Gets+res.Traffic.Stats)
				return nil
			})
		},
	}
}

func (a *app) pullCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "pull [REMOTE]",
		Short: "Import the task's history from a remote; files come when a restore, diff or cat needs them",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withEngine(cmd, func(e *engine.Engine) error {
				view, err := protocol.RunPull(cmd.Context(), e, args, a.task, a.syncProgress("pull"))
				if err != nil {
					return err
				}
				a.progress.clear()
				a.printOrSay(view, "pulled task %s from %s: %d checkpoints; head %s", view.Task, view.Remote, view.Checkpoints, view.Head[:12])
				return nil
			})
		},
	}
}

func (a *app) cloneCommand() *cobra.Command {
	var name string
	var kf keyFlags
	cmd := &cobra.Command{
		Use:   "clone URL",
		Short: "Set up a workspace (-C DIR, created if missing) and its store from a remote, and restore the task's head",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			key, err := kf.key(a.localPath)
			if err != nil {
				return err
			}
			// Opened first: a wrong key or URL creates no workspace or store.
			b, err := protocol.OpenRemote(cmd.Context(), engine.RemoteInfo{URL: args[0], Key: key})
			if errors.Is(err, engine.ErrWrongKey) {
				return &protocol.AdvisedError{Err: err, Advice: "; check the key file or passphrase given to --key-file or --passphrase-env"}
			}
			if err != nil {
				return err
			}
			defer b.Close()
			made, err := a.makeCloneDirs()
			if err != nil {
				return err
			}
			err = a.withEngine(cmd, func(e *engine.Engine) error {
				res, err := e.Clone(cmd.Context(), b, engine.CloneOptions{Remote: name, URL: args[0], Task: a.task,
					Key: key, Progress: a.syncProgress("clone")})
				a.progress.clear()
				if res != nil && res.Resumed != nil {
					a.reportSettled(res.Resumed)
				}
				if err != nil {
					return err
				}
				if len(res.Restore.Conflicts) > 0 {
					a.exitCode = protocol.ExitConflicts
					if !a.json {
						// The reasons alone: the restore's advice names flags
						// clone does not take.
						for _, c := range res.Restore.Conflicts {
							fmt.Fprintf(a.stderr, "ckpt: conflict: %s: %s\n", c.Path, c.Reason)
						}
						// Not a plain restore: its backup of these files would be
						// the task's next checkpoint, which forks it from the
						// remote's.
						fmt.Fprintf(a.stderr, "ckpt: the clone left those paths as they were; to take the remote's version of them, move them aside and run ckpt restore --no-backup HEAD\n")
					}
				}
				view := protocol.CloneJSON{Remote: name, URL: args[0], Task: res.Pull.Task, Head: res.Pull.Head.String(),
					Workspace: e.Workspace(), Checkpoints: res.Pull.Checkpoints, Written: len(res.Restore.Written),
					Conflicts: len(res.Restore.Conflicts),
					Fetched:   res.Restore.Fetched.Blobs, Traffic: protocol.TrafficView(res.Traffic), DurationMs: res.Duration.Milliseconds()}
				if a.json {
					a.printJSON(view)
					return nil
				}
				a.say("cloned task %s into %s: %d checkpoints, %d files, %s fetched", view.Task, view.Workspace,
					view.Checkpoints, view.Written, humanBytes(res.Traffic.BytesDown))
				return nil
			})
			var damage *engine.CorruptError
			switch {
			case errors.Is(err, engine.ErrUnknownRef) && made.undo():
				return fmt.Errorf("%w; nothing was cloned, and the workspace and store this clone made are removed", withoutUnfinished(err))
			case errors.Is(err, engine.ErrWrongKey):
				// The key is the clone's flags, which no store records
				// yet: not what `ckpt remote list` shows.
				err = &protocol.AdvisedError{Err: withoutUnfinished(err), Advice: "; give the remote's key with --key-file or --passphrase-env"}
				if made.undo() {
					return fmt.Errorf("%w; nothing was cloned, and the workspace and store this clone made are removed", err)
				}
				return err
			case errors.Is(err, engine.ErrUnfinishedClone) && errors.As(err, &damage) && damage.OnRemote:
				return fmt.Errorf("%w (once the remote is mended, the same ckpt clone run again finishes it)", err)
			case errors.Is(err, engine.ErrUnfinishedClone):
				return fmt.Errorf("%w (the same ckpt clone run again finishes it)", err)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&name, "name", "origin", "the name the remote gets in the new store")
	kf.register(cmd, false)
	return cmd
}

// cloneDirs are the directories a clone made: the store, when there was
// none, and the workspace directories that did not exist.
type cloneDirs struct {
	store      string // "" when the store was there
	workspaces []string
}

// makeCloneDirs makes the clone's workspace directories (several: a
// multi-root remote's roots) and notes which it made, and whether the
// store is still to be made.
func (a *app) makeCloneDirs() (*cloneDirs, error) {
	made := &cloneDirs{}
	for _, dir := range a.workspaceDirs() {
		if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
			made.workspaces = append(made.workspaces, dir)
		}
		if err := osfs.MkdirAllUser(dir); err != nil { // the user's, not the store's private mode
			return nil, err
		}
	}
	// The default store is named after the workspace, which must exist
	// to be named.
	if store, ok := a.endpointStore(); ok {
		if _, err := os.Lstat(store); errors.Is(err, fs.ErrNotExist) {
			made.store = store
		}
	}
	return made, nil
}

// undo removes what a clone that imported nothing made: the store it
// created and the workspace directories it made, if still empty. It
// reports whether the store was the clone's to remove.
func (d *cloneDirs) undo() bool {
	if d.store == "" {
		return false
	}
	if err := os.RemoveAll(d.store); err != nil {
		return false
	}
	for _, dir := range d.workspaces {
		os.Remove(dir) // only an empty directory goes
	}
	return true
}

// knownRemote reports whether the store records remote name: a removal
// it refuses then needs the store's blobs, not another name.
func knownRemote(ctx context.Context, e *engine.Engine, name string) bool {
	remotes, err := e.Remotes(ctx)
	return err == nil && slices.ContainsFunc(remotes, func(r engine.RemoteInfo) bool { return r.Name == name })
}

// withoutUnfinished is the error of a Clone without its ErrUnfinishedClone
// mark, for a clone that undid what it made.
func withoutUnfinished(err error) error {
	if u, ok := err.(interface{ Unwrap() []error }); ok {
		for _, cause := range u.Unwrap() {
			if cause != engine.ErrUnfinishedClone {
				return cause
			}
		}
	}
	return err
}

// remoteGC runs gc --remote name with policy.
func (a *app) remoteGC(ctx context.Context, e *engine.Engine, name string, policy engine.RetentionPolicy, grace time.Duration) error {
	r, b, err := protocol.RemoteBackend(ctx, e, []string{name})
	if err != nil {
		return err
	}
	defer b.Close()
	res, err := e.RemoteGC(ctx, b, engine.RemoteGCOptions{Remote: r.Name, Policy: &policy, Grace: grace})
	if err != nil {
		return err
	}
	a.printOrSay(protocol.RemoteGCJSON{Remote: r.Name, Tasks: res.Tasks, Dropped: res.Dropped, Marked: res.Marked, Deleted: res.Deleted,
		DeletedBytes: res.DeletedBytes, Traffic: protocol.TrafficView(res.Traffic), DurationMs: res.Duration.Milliseconds()},
		"gc of %s: %d tasks, %d checkpoints dropped, %d objects deleted (%s), %d marked for a gc %v from now",
		r.Name, res.Tasks, res.Dropped, res.Deleted, humanBytes(res.DeletedBytes), res.Marked, grace)
	return nil
}
