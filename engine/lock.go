package engine

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ckpt/ckpt/internal/osfs"
)

// storeLock is an exclusive OS file lock (osfs.TryLock) on a store. The holder writes
// its pid and command into the lock file so that a waiting process can say who
// is in the way. The kernel drops the lock when the holder dies, so a crashed
// process never leaves the store locked.
type storeLock struct {
	f *os.File
}

// lockName is the lock file's name in the store.
const lockName = "lock"

// lockPollInterval is the back-off between non-blocking lock attempts while
// waiting for another holder; the OS lock has no timeout of its own.
const lockPollInterval = 20 * time.Millisecond

// lockTransitionGrace is how long a lock with no holder named in it is
// waited for even by a caller that does not wait (timeout 0). A nameless
// lock is in transition: its holder is between taking it and writing its
// name, or has cleared its name and is closing it while a child it forked
// at that moment still shares the open file until the child execs (flock
// belongs to the open file, not the process). Neither lasts, and failing
// as busy then would blame nobody.
const lockTransitionGrace = 2 * time.Second

// yieldGrace is how long a lock whose holder gives way (Options.GivesWay)
// is waited for even by a caller that does not wait: the holder lets go
// within its probe's interval and the cleanup of the work it cuts off.
const yieldGrace = 2 * time.Second

// givesWayMark follows the pid in the lock file's line of a holder that
// gives way ("pid 12 [gives way] (ckpt background-recompress)"): before the
// command, which may be long and say anything.
const givesWayMark = " [gives way]"

// parseHolder returns the holder line of a lock file without its
// givesWayMark, and whether it had one.
func parseHolder(line string) (name string, givesWay bool) {
	pid, command, ok := strings.Cut(line, " (")
	if !ok || !strings.HasSuffix(pid, givesWayMark) {
		return line, false
	}
	return strings.TrimSuffix(pid, givesWayMark) + " (" + command, true
}

// holder is what a holder records in the lock file besides its pid.
type holder struct {
	command  string // the command line; "" for the process's arguments
	givesWay bool   // Options.GivesWay
}

// holderOf returns the holder that an Engine opened with opts records.
func holderOf(opts Options) holder { return holder{command: opts.Command, givesWay: opts.GivesWay} }

// acquireLock takes the lock at path (created unless mustExist), waiting
// up to timeout for another holder that has named itself, up to
// lockTransitionGrace for one that has not, and up to yieldGrace for one
// that gives way. It gives up at once, with
// ctx's error, when ctx is cancelled while it waits: a signal must not
// wait out the lock timeout. A lock won on a file that is no longer the
// one at path (the store was removed, or removed and made again, while it
// waited) is let go and the file now at path locked instead; with
// mustExist, a path with no file fails with an error wrapping
// fs.ErrNotExist.
func acquireLock(ctx context.Context, path string, who holder, timeout time.Duration, mustExist bool) (*storeLock, error) {
	start := time.Now()
	for attempt := 1; ; attempt++ {
		f, err := osfs.OpenLockFile(path, !mustExist)
		if err != nil {
			return nil, fmt.Errorf("open lock file: %w", err)
		}
		if err := waitForLock(ctx, f, path, start, timeout); err != nil {
			f.Close()
			return nil, err
		}
		// A file system that cannot tell files apart must not make this
		// loop for ever: the third lock won is kept.
		if isAt(f, path) || attempt == 3 {
			command := cmp.Or(who.command, strings.Join(os.Args, " "))
			mark := ""
			if who.givesWay {
				mark = givesWayMark
			}
			if err := f.Truncate(0); err == nil {
				fmt.Fprintf(f, "pid %d%s (%s)\n", os.Getpid(), mark, command)
			}
			return &storeLock{f: f}, nil
		}
		f.Close()
	}
}

// waitForLock locks f, polling until start+timeout (or the transition
// grace) as acquireLock describes. While it waits it marks itself a
// waiter (waiterMark), so that a holder working in slices gives the store
// up early (Engine.Awaited).
func waitForLock(ctx context.Context, f *os.File, path string, start time.Time, timeout time.Duration) error {
	waiting := waiterMark{path: filepath.Join(filepath.Dir(path), waitersName)}
	defer waiting.drop()
	for {
		ok, err := osfs.TryLock(f)
		if err != nil {
			return fmt.Errorf("lock %s: %w", path, err)
		}
		if ok {
			return nil
		}
		waiting.try()
		if now := time.Now(); !now.Before(start.Add(timeout)) {
			holder, givesWay := parseHolder(readHolder(f))
			switch waited := now.Sub(start); {
			case holder == "" && waited < lockTransitionGrace:
			case givesWay && waited < yieldGrace:
			default:
				return &BusyError{Store: filepath.Dir(path), Holder: holder}
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(lockPollInterval):
		}
	}
}

// isAt reports whether f is the file at path still.
func isAt(f *os.File, path string) bool {
	held, err := f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Stat(path)
	return err == nil && os.SameFile(held, now)
}

func readHolder(f *os.File) string {
	buf := make([]byte, 512)
	n, _ := f.ReadAt(buf, 0)
	return strings.TrimSpace(string(buf[:n]))
}

// release drops the lock. The holder text is cleared first so a stale line is
// never attributed to a process that no longer holds the lock.
func (l *storeLock) release() error {
	_ = l.f.Truncate(0)
	return l.f.Close()
}

// LastLockChange returns when a process last took or let go of the lock of
// the store at storeDir: a holder writes its name into the lock file when
// it takes the lock and clears it when it lets go, which dates the file
// (on Windows the date may wait for the letting go). A process that works
// only while the store is quiet (the background recompression) waits with
// it for a lull between commands. It fails with an error wrapping
// fs.ErrNotExist when there is no store.
func LastLockChange(storeDir string) (time.Time, error) {
	info, err := os.Stat(filepath.Join(storeDir, lockName))
	if err != nil {
		return time.Time{}, err
	}
	return info.ModTime(), nil
}
