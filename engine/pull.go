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
// ranged reads, through a backend Options.OpenRemote opens for that call
// (b serves this Pull only), verified against their ids and stored. The import is
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
