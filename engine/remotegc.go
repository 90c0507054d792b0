package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/ckpt/ckpt/engine/internal/remotesync"
)

// DefaultRemoteGrace is how long a remote gc leaves an object it found
// unreferenced before a later gc deletes it.
const DefaultRemoteGrace = time.Hour

// RemoteGCOptions select what RemoteGC drops and deletes.
type RemoteGCOptions struct {
	// Remote is the remote's name in the store (AddRemote). Required.
	Remote string
	// Policy selects the checkpoints each remote task drops (KeepLast and
	// MaxAge; MaxSize does not apply to remotes); nil means the store's
	// default (Retention).
	Policy *RetentionPolicy
	// Grace is how long an unreferenced object stays marked before it is
	// deleted; 0 means DefaultRemoteGrace.
	Grace time.Duration
}

// RemoteGCResult says what RemoteGC did.
type RemoteGCResult struct {
	Tasks        int   // tasks on the remote
	Dropped      int   // checkpoints dropped from them
	Marked       int   // unreferenced objects marked, deleted by a gc at least Grace later
	Deleted      int   // objects deleted
	DeletedBytes int64 // their size
	Traffic      SyncTraffic
	Duration     time.Duration
}

// RemoteGC collects garbage on a remote, never deleting unless asked to
// by this call: it applies the retention policy to every task there (each
// task's head stays; its segments are replaced by one holding what is
// kept, by a conditional write that a concurrent push wins), then deletes
// the data objects and segments that no head references, in two rounds:
// a gc marks what it finds unreferenced, and a gc at least Grace later
// deletes what is still unreferenced then. An object a head names, or one
// a push running within Grace relies on, is never deleted. Errors are as
// for Push.
func (e *Engine) RemoteGC(ctx context.Context, b Backend, opts RemoteGCOptions) (*RemoteGCResult, error) {
	start := time.Now()
	policy := opts.Policy
	if policy == nil {
		p, err := e.Retention(ctx)
		if err != nil {
			return nil, err
		}
		policy = &p
	}
	grace := opts.Grace
	if grace <= 0 {
		grace = DefaultRemoteGrace
	}
	var res *RemoteGCResult
	err := e.withSyncer(ctx, b, opts.Remote, "", nil, func(s *remotesync.Syncer, _ string) error {
		r, err := s.GC(ctx, remotesync.GCPolicy{KeepLast: policy.KeepLast, MaxAge: policy.MaxAge, Grace: grace, Now: e.opts.now()})
		if err != nil {
			return fmt.Errorf("gc of remote %s: %w", opts.Remote, err)
		}
		res = &RemoteGCResult{Tasks: r.Tasks, Dropped: r.Dropped, Marked: r.Marked, Deleted: r.Deleted,
			DeletedBytes: r.DeletedBytes, Traffic: SyncTraffic(s.Counters())}
		return nil
	})
	if err != nil {
		return nil, translate(remoteError(err, opts.Remote), e.storeDir)
	}
	res.Duration = time.Since(start)
	return res, nil
}
