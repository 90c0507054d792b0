package localsock

import (
	"os"
	"path/filepath"

	"github.com/ckpt/ckpt/internal/osfs"
)

// lockName is the store's lock file, the engine's: the process that
// serves a store holds it for as long as the store's endpoint is its.
const lockName = "lock"

// removeIfStale runs remove, which removes an endpoint that refused a
// client, only when that endpoint is provably stale: the store's lock,
// which every server holds while it listens (see Listen), could be taken
// without waiting. remove runs while this holds the lock, so that no
// server can come to listen meanwhile. While another process holds the
// lock the endpoint stays, whatever it is: a server may have replaced the
// one that refused since, or be about to listen on it, and the next Listen
// replaces a stale one anyway. A store without a lock file, which no
// server ever opened, keeps it too.
func removeIfStale(storeDir string, remove func()) {
	f, err := os.OpenFile(filepath.Join(storeDir, lockName), os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer f.Close() // lets go of the lock
	if ok, err := osfs.TryLock(f); err == nil && ok {
		remove()
	}
}
