package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/ckpt/ckpt/engine/internal/remotesync"
)

// PullOptions select what Pull imports.
type PullOptions struct {
	// Remote is the remote's name in the store (AddRemote). Required.
	Remote string
	// Task is the task to pull; "" means DefaultTask.
	Task     string
	Progress func(SyncProgress)
}

// PullResult says what Pull did.
type PullResult struct {
	Task        string
	Head        ID  // the task's head in the store after the pull
	Checkpoints int // checkpoints imported
	Trees       int // trees imported
	Blobs       int // blobs located on the remote (fetched when needed)
	// Moved: the store's head moved to the remote's, which had saved further.
	Moved    bool
	Traffic  SyncTraffic
	Duration time.Duration
}

// Pull imports a task's history from b: its checkpoints and trees, and
// where each of its blobs lives on the remote. Blobs stay there until a
// Restore, Diff, Cat or ReadState needs them; they are then fetched by
// ranged reads, verified against their ids and stored. The import is
// verified first and committed at once, so a failed pull changes nothing.
// The task's head moves to the remote's when the remote has saved further.
// Pull fails with ErrUnknownRef when the remote has no such task,
// ErrDiverged when the remote's task and the store's forked (nothing is
// imported), and a *CorruptError when a remote object does not verify.
func (e *Engine) Pull(ctx context.Context, b Backend, opts PullOptions) (*PullResult, error) {
	start := time.Now()
	res, err := e.pull(ctx, b, opts)
	if err != nil {
		return nil, translate(remoteError(err, opts.Remote), e.storeDir)
	}
	res.Duration = time.Since(start)
	return res, nil
}

func (e *Engine) pull(ctx context.Context, b Backend, opts PullOptions) (*PullResult, error) {
	var res *PullResult
	err := e.withSyncer(ctx, b, opts.Remote, opts.Task, opts.Progress, func(s *remotesync.Syncer, task string) error {
		r, err := s.Pull(ctx, task)
		if err != nil {
			return fmt.Errorf("pull %q from %s: %w", task, opts.Remote, err)
		}
		res = &PullResult{Task: task, Head: ID(r.Head), Checkpoints: r.Checkpoints, Trees: r.Trees, Blobs: r.Blobs,
			Moved: r.Moved, Traffic: SyncTraffic(s.Counters())}
		return nil
	})
	return res, err
}

// CloneOptions select what Clone brings into a new store.
type CloneOptions struct {
	// Remote is the name the remote gets in the new store; "" means "origin".
	Remote string
	// URL is recorded as the remote's URL (AddRemote). Required.
	URL string
	// Task is the task to clone; "" means DefaultTask.
	Task string
	// Key is recorded as how the remote is encrypted (AddEncryptedRemote);
	// it must be set exactly when the Backend given to Clone is one that
	// EncryptRemote returned.
	Key      RemoteKey
	Progress func(SyncProgress)
}

// CloneResult says what Clone did.
type CloneResult struct {
	Pull    *PullResult
	Restore *RestoreResult
	// Traffic covers the pull and the blobs the restore fetched.
	Traffic  SyncTraffic
	Duration time.Duration
}

// Clone sets up a new store from a remote: it records the remote (as
// AddRemote), pulls the task, and restores the task's head into the
// workspace (without a backup: the store had nothing to back up). The
// store must hold no task yet (ErrBadRequest otherwise). Errors are those
// of Pull and Restore.
func (e *Engine) Clone(ctx context.Context, b Backend, opts CloneOptions) (*CloneResult, error) {
	start := time.Now()
	if opts.Remote == "" {
		opts.Remote = "origin"
	}
	tasks, err := e.db.Tasks()
	if err != nil {
		return nil, translate(err, e.storeDir)
	}
	if len(tasks) > 0 {
		return nil, translate(fmt.Errorf("%w: clone needs a new store; %s has %d task(s)", ErrBadRequest, e.storeDir, len(tasks)), e.storeDir)
	}
	if err := checkKeying(ctx, opts.Remote, opts.Key, b); err != nil {
		return nil, translate(err, e.storeDir)
	}
	if err := translate(e.addRemote(ctx, RemoteInfo{Name: opts.Remote, URL: opts.URL, Key: opts.Key}), e.storeDir); err != nil {
		return nil, err
	}
	pr, err := e.Pull(ctx, b, PullOptions{Remote: opts.Remote, Task: opts.Task, Progress: opts.Progress})
	if err != nil {
		return nil, err
	}
	e.remoteMu.Lock()
	e.remoteMu.progress = opts.Progress
	e.remoteMu.Unlock()
	rr, err := e.Restore(ctx, pr.Head.String(), RestoreOptions{Task: pr.Task, NoBackup: true})
	e.remoteMu.Lock()
	e.remoteMu.progress = nil
	e.remoteMu.Unlock()
	if err != nil {
		return nil, err
	}
	res := &CloneResult{Pull: pr, Restore: rr, Traffic: pr.Traffic, Duration: time.Since(start)}
	res.Traffic.Gets += rr.Fetched.Requests
	res.Traffic.BytesDown += rr.Fetched.Bytes
	return res, nil
}
