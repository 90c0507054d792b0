package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ckpt/ckpt/index"
)

// ErrUnfinishedClone is matched, beside its cause, by the error of a
// Clone that failed after it had set up the store: the same Clone run
// again finishes it.
var ErrUnfinishedClone = errors.New("clone unfinished")

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
	// Resumed is the restore an earlier run of this clone left
	// unfinished, settled before the pull (nil when there was none).
	Resumed *SettledRestore
	Pull    *PullResult
	// Restore is the restore of the head the pull found: this run's, or
	// Resumed.Completed when that restored the same head whole (the
	// remote's head had not moved since the earlier run).
	Restore *RestoreResult
	// Traffic covers the pull and the blobs the restores fetched.
	Traffic  SyncTraffic
	Duration time.Duration
}

// Clone sets up a new store from a remote: it records the remote (as
// AddRemote) and that a clone is under way, pulls the task, restores the
// task's head into the workspace (without a backup: the store had nothing
// to back up) and then forgets the clone was under way. The store must
// hold no task yet, or be one that a Clone with the same remote, URL,
// task and key left unfinished: Clone then pulls again and finishes the
// restore. Any other store is ErrBadRequest. A failure after the store
// was set up matches ErrUnfinishedClone beside the errors of Pull and
// Restore; when it comes after Clone settled the restore of an earlier
// run, Clone returns that too, in a result with only Resumed set (a
// failure returns no result otherwise).
func (e *Engine) Clone(ctx context.Context, b Backend, opts CloneOptions) (*CloneResult, error) {
	start := time.Now()
	if opts.Remote == "" {
		opts.Remote = "origin"
	}
	task, err := taskName(opts.Task)
	if err != nil {
		return nil, translate(err, e.storeDir)
	}
	if err := checkKeying(ctx, opts.Remote, opts.Key, b); err != nil {
		return nil, translate(err, e.storeDir)
	}
	want := pendingClone{Remote: opts.Remote, URL: opts.URL, Task: task, Key: opts.Key}
	if err := e.beginClone(ctx, want); err != nil {
		return nil, translate(err, e.storeDir)
	}
	res, err := e.pullAndRestore(ctx, b, want, opts.Progress)
	if err == nil {
		err = translate(e.finishClone(ctx), e.storeDir)
	}
	if err != nil {
		err = fmt.Errorf("%w: %w", ErrUnfinishedClone, err)
		if res.Resumed != nil {
			return &CloneResult{Resumed: res.Resumed}, err
		}
		return nil, err
	}
	res.Duration = time.Since(start)
	return res, nil
}

// pullAndRestore pulls the task of c and restores its head, fetching
// the blobs from the remote while it writes the files. A restore an
// earlier run of the clone left unfinished is settled first, fetching in
// the same way. It returns a result on failure too: Resumed says whether
// that settling had been done.
func (e *Engine) pullAndRestore(ctx context.Context, b Backend, c pendingClone, progress func(SyncProgress)) (*CloneResult, error) {
	ctx = e.handing(ctx, c.Remote, b, progress)
	res := &CloneResult{}
	var err error
	if res.Resumed, err = e.settleClone(ctx, c); err != nil {
		return res, err
	}
	if res.Pull, err = e.Pull(ctx, b, PullOptions{Remote: c.Remote, Task: c.Task, Progress: progress}); err != nil {
		return res, err
	}
	res.Traffic = res.Pull.Traffic
	if r := res.resumed(); r != nil {
		res.Traffic.Gets += r.Fetched.Requests
		res.Traffic.BytesDown += r.Fetched.Bytes
		if r.Restored == res.Pull.Head && len(res.Resumed.Journal.Paths) == 0 {
			// The earlier run's restore was of the whole head the pull
			// found: restoring it again would only read back every file.
			res.Restore = r
			return res, nil
		}
	}
	if res.Restore, err = e.Restore(ctx, res.Pull.Head.String(), RestoreOptions{Task: res.Pull.Task, NoBackup: true, streamFrom: c.Remote}); err != nil {
		return res, err
	}
	res.Traffic.Gets += res.Restore.Fetched.Requests
	res.Traffic.BytesDown += res.Restore.Fetched.Bytes
	return res, nil
}

// settleClone settles a restore left interrupted (an earlier run of clone
// c stopped while it wrote), fetching from c's remote while it writes.
func (e *Engine) settleClone(ctx context.Context, c pendingClone) (*SettledRestore, error) {
	unlock, err := e.lockForWrite()
	if err != nil {
		return nil, err
	}
	defer unlock()
	return e.settleStreaming(ctx, c.Remote)
}

// resumed is the restore that settling an earlier run's completed, or nil.
func (r *CloneResult) resumed() *RestoreResult {
	if r.Resumed == nil {
		return nil
	}
	return r.Resumed.Completed
}

// cloneKey is the store setting that marks a clone under way: its
// pendingClone as JSON, from the commit that records the remote until
// the restore is done.
const cloneKey = "clone/pending"

// pendingClone is what identifies a clone: a rerun with the same values
// finishes it.
type pendingClone struct {
	Remote string    `json:"remote"`
	URL    string    `json:"url"`
	Task   string    `json:"task"`
	Key    RemoteKey `json:"key"`
}

// beginClone records c's remote and marks c under way in one commit, in a
// store that holds no task; or finds c under way already, left unfinished
// by an earlier run. It refuses any other store.
func (e *Engine) beginClone(ctx context.Context, c pendingClone) error {
	return e.writeSettings(ctx, func(b *index.Batch) error {
		if v, ok, err := e.db.Config(cloneKey); err != nil {
			return err
		} else if ok {
			var was pendingClone
			if json.Unmarshal([]byte(v), &was) == nil && was == c {
				return nil
			}
			return fmt.Errorf("%w: %s holds an unfinished clone of task %q from %s; only the same clone finishes it", ErrBadRequest, e.storeDir, was.Task, was.URL)
		}
		tasks, err := e.db.Tasks()
		if err != nil {
			return err
		}
		if len(tasks) > 0 {
			return fmt.Errorf("%w: clone needs a new store; %s has %d task(s)", ErrBadRequest, e.storeDir, len(tasks))
		}
		mark, err := json.Marshal(c)
		if err != nil {
			return err
		}
		b.SetConfig(cloneKey, string(mark))
		return e.recordRemote(b, RemoteInfo{Name: c.Remote, URL: c.URL, Key: c.Key})
	})
}

// finishClone forgets that a clone is under way.
func (e *Engine) finishClone(ctx context.Context) error {
	return e.writeSettings(ctx, func(b *index.Batch) error {
		b.DeleteConfig(cloneKey)
		return nil
	})
}
