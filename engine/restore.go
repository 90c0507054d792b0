package engine

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/ckpt/ckpt/internal/index"
	"github.com/ckpt/ckpt/internal/objects"
)

// Only selects what a restore rewinds.
type Only string

// Restore flavours.
const (
	OnlyWorkspace Only = "workspace" // the files (default)
	OnlyState     Only = "state"     // the host's state blob only; files untouched
	OnlyBoth      Only = "both"      // files and state
)

// RestoreOptions configure Restore.
type RestoreOptions struct {
	Task     string
	Only     Only     // default OnlyWorkspace
	Paths    []string // restore only these workspace-relative paths (files or directories)
	DryRun   bool     // report the plan, change nothing
	NoBackup bool     // skip the backup checkpoint of the current state
	Force    bool     // overwrite uncaptured files that stand in the way instead of reporting conflicts
}

// Conflict is a path a restore left alone because an uncaptured file
// (ignored, skipped, or not yet saved into any checkpoint) stands there.
type Conflict struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// RestoreResult reports what Restore did (or, for a dry run, would do).
type RestoreResult struct {
	Restored  objects.ID
	Backup    objects.ID // the checkpoint holding the state before the restore; zero with NoBackup
	State     objects.ID // the target's state blob (read it with ReadState); zero when none
	Written   []string   // files and symlinks written (or modes changed)
	Deleted   []string   // files, symlinks and directories removed
	Conflicts []Conflict
	Duration  time.Duration
}

// Restore makes the workspace's captured files equal to checkpoint ref.
//
// It first saves a backup checkpoint of the current state (unless NoBackup),
// so every restore can be undone. It then writes only what differs: each file
// atomically (temporary file in the same directory, then rename), through an
// os.Root so nothing outside the workspace can be written even through a
// symlink. It never deletes or overwrites anything the current state does not
// capture (ignored files, nested .git, skipped files): such paths are
// reported as conflicts unless Force. Unless Paths limits it, the task's head
// moves to ref; later checkpoints stay listed, so restoring one redoes.
// A journal makes an interrupted restore resumable: run it again.
func (e *Engine) Restore(ctx context.Context, ref string, opts RestoreOptions) (*RestoreResult, error) {
	start := time.Now()
	unlock, err := e.lockForWrite()
	if err != nil {
		return nil, e.report(err, start)
	}
	defer unlock()
	res, err := e.restoreLocked(ctx, ref, opts)
	if err != nil {
		return nil, e.report(err, start)
	}
	res.Duration = time.Since(start)
	if !opts.DryRun {
		e.emit(Event{Type: EventRestore, Task: taskOrDefault(opts.Task), Commit: res.Restored.String(), Duration: res.Duration})
	}
	return res, nil
}

func (e *Engine) restoreLocked(ctx context.Context, ref string, opts RestoreOptions) (*RestoreResult, error) {
	task := taskOrDefault(opts.Task)
	target, cp, err := e.resolveCheckpoint(task, ref)
	if err != nil {
		return nil, err
	}
	if cp.Task != task {
		return nil, fmt.Errorf("%w: checkpoint %s belongs to task %q; pass --task %s", ErrBadRequest, target.Short(), cp.Task, cp.Task)
	}
	only := opts.Only
	if only == "" {
		only = OnlyWorkspace
	}
	filter, err := parsePathFilter(opts.Paths)
	if err != nil {
		return nil, err
	}
	res := &RestoreResult{Restored: target, State: cp.State}
	switch only {
	case OnlyState:
		if opts.DryRun {
			return res, nil
		}
		return res, e.moveHead(task, target)
	case OnlyWorkspace, OnlyBoth:
	default:
		return nil, fmt.Errorf("%w: --only must be workspace, state or both, not %q", ErrBadRequest, only)
	}
	snap, err := e.currentState(ctx, task, target, cp.Seq, opts, res)
	if err != nil {
		return nil, err
	}
	plan, err := planRestore(ctx, e.treeSource(snap), snap.root, cp.Root, filter)
	if err != nil {
		return nil, storeError(err, e.storeDir)
	}
	root, err := os.OpenRoot(e.workspace)
	if err != nil {
		return nil, fmt.Errorf("open workspace: %w", err)
	}
	defer root.Close()
	x := &applier{e: e, root: root, force: opts.Force, res: res}
	if opts.DryRun {
		x.preview(plan)
		return res, nil
	}
	j := &Journal{Task: task, Target: target, Backup: res.Backup, Paths: filter, Started: time.Now().UTC()}
	if err := writeJournal(e.journalPath(), j); err != nil {
		return nil, err
	}
	if err := x.apply(ctx, plan); err != nil {
		return nil, fmt.Errorf("restore interrupted (%w); the journal keeps it resumable: run the same restore again", err)
	}
	if len(filter) == 0 {
		if err := e.moveHead(task, target); err != nil {
			return nil, err
		}
	}
	if err := os.Remove(e.journalPath()); err != nil {
		return nil, fmt.Errorf("remove restore journal: %w", err)
	}
	e.pending = nil
	return res, nil
}

// currentState captures the workspace before a restore: as a backup
// checkpoint normally, hash-only for dry runs, NoBackup, or when resuming an
// interrupted restore whose journal already names the backup.
func (e *Engine) currentState(ctx context.Context, task string, target objects.ID, seq uint64, opts RestoreOptions, res *RestoreResult) (*snapshot, error) {
	resuming := e.pending != nil && e.pending.Task == task && e.pending.Target == target
	if opts.DryRun || opts.NoBackup || resuming {
		if resuming {
			res.Backup = e.pending.Backup
		}
		return e.scan(ctx, nil)
	}
	sr, snap, err := e.saveLocked(ctx, SaveOptions{Task: task, Message: fmt.Sprintf("backup before restore to @%d", seq)}, index.KindBackup)
	if err != nil {
		return nil, fmt.Errorf("backup before restore: %w", err)
	}
	res.Backup = sr.ID
	return snap, nil
}

// moveHead points the task's head at target, keeping its sequence counter.
func (e *Engine) moveHead(task string, target objects.ID) error {
	head, _, err := e.db.Task(task)
	if err != nil {
		return storeError(err, e.storeDir)
	}
	b := e.db.NewBatch()
	defer b.Close()
	b.SetTaskHead(task, index.TaskHead{Head: target, LastSeq: head.LastSeq})
	return b.Commit()
}
