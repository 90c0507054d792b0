package background

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ckpt/ckpt/internal/osfs"
)

// markName is the file in a store that the running background process
// holds locked (osfs.TryLock), its pid written in it.
const markName = "background"

// claimGrace is how long Claim tries for a mark that a Running probe may
// hold for an instant.
const claimGrace = time.Second

// claimRetry separates two attempts of Claim.
const claimRetry = 10 * time.Millisecond

// Claim marks the background process of store as this one, and reports
// false when another process holds the mark (it runs for store already).
// The mark lasts until release is called or the process dies. It fails
// with an error wrapping fs.ErrNotExist when store does not exist, and
// creates nothing then.
func Claim(store string) (release func() error, ok bool, err error) {
	if _, err := os.Stat(store); err != nil {
		return nil, false, err
	}
	f, err := os.OpenFile(filepath.Join(store, markName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, err
	}
	for deadline := time.Now().Add(claimGrace); ; {
		ok, err := osfs.TryLock(f)
		if err != nil || (!ok && !time.Now().Before(deadline)) {
			f.Close()
			return nil, false, err
		}
		if ok {
			break
		}
		time.Sleep(claimRetry)
	}
	if err := f.Truncate(0); err == nil {
		fmt.Fprintf(f, "%d\n", os.Getpid())
	}
	release = func() error {
		_ = f.Truncate(0) // a stale pid is never read as a running process
		return f.Close()
	}
	return release, true, nil
}

// Running returns the pid of the background process that holds store's
// mark, 0 when none does. It takes the mark for an instant to tell (a
// Claim meanwhile waits for it), and waits up to claimGrace for a holder
// between taking the mark and writing its pid, or clearing it and
// letting go.
func Running(store string) (int, error) {
	f, err := osfs.OpenLockFile(filepath.Join(store, markName), false)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, 32)
	for deadline := time.Now().Add(claimGrace); ; time.Sleep(claimRetry) {
		free, err := osfs.TryLock(f)
		if err != nil || free {
			return 0, err
		}
		n, _ := f.ReadAt(buf, 0)
		if pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n]))); err == nil {
			return pid, nil
		}
		if !time.Now().Before(deadline) {
			return 0, fmt.Errorf("%s: held with no pid in it", filepath.Join(store, markName))
		}
	}
}
