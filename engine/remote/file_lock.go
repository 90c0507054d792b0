package remote

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/zeebo/blake3"

	"github.com/ckpt/ckpt/internal/osfs"
)

// keyLocks serialises the check-and-rename step of writes to one key, in
// this process (a mutex) and across processes and machines (an advisory
// lock on one of 256 lock files under ~locks, chosen by a hash of the key).
// The data of a put is written before the lock is taken, so the lock is
// held only for a stat, a rename and a directory sync.
type keyLocks struct {
	dir string
	mu  [256]sync.Mutex
}

// lockPollInterval is the pause between attempts to take a lock file held
// by another process: the advisory lock has no blocking form with a
// deadline, and a context must be able to end the wait.
const lockPollInterval = 2 * time.Millisecond

// lock takes key's lock and returns the function that releases it.
func (l *keyLocks) lock(ctx context.Context, key string) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sum := blake3.Sum256([]byte(key))
	stripe := sum[0]
	mu := &l.mu[stripe]
	mu.Lock()
	path := filepath.Join(l.dir, fmt.Sprintf("%02x", stripe))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		mu.Unlock()
		return nil, fmt.Errorf("remote: lock %s: %w", key, err)
	}
	release := func() {
		f.Close()
		mu.Unlock()
	}
	for {
		ok, err := osfs.TryLock(f)
		if err != nil {
			release()
			return nil, fmt.Errorf("remote: lock %s: %w", key, err)
		}
		if ok {
			return release, nil
		}
		select {
		case <-ctx.Done():
			release()
			return nil, ctx.Err()
		case <-time.After(lockPollInterval):
		}
	}
}
