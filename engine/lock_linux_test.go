package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ckpt/ckpt/internal/testbound"
)

// A lock won on a lock file that was replaced while waiting is not kept:
// the waiter turns to the file now at the path, and its holder.
func TestLockWonOnAReplacedFileIsNotKept(t *testing.T) {
	t.Parallel()
	// /proc shows the resolved path.
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "lock")
	old := holdLock(t, path, "pid 1 (old)\n")
	got := make(chan error, 1)
	go func() {
		l, err := acquireLock(context.Background(), path, holder{command: "waiter"}, 5*time.Second, false)
		if err == nil {
			l.release()
		}
		got <- err
	}()
	// The waiter must be waiting on the old file before it is replaced, or
	// this would test nothing.
	waitUntilOpenedTwice(t, path)
	replacement := holdLock(t, path+".new", "pid 2 (new)\n")
	defer replacement.Close()
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	old.Close()
	var busy *BusyError
	if err := <-got; !errors.As(err, &busy) || busy.Holder != "pid 2 (new)" {
		t.Fatalf("waiter: %v, want busy naming the replacement's holder", err)
	}
}

// waitUntilOpenedTwice waits until this process has two descriptors open
// on path: the test's own and the waiter's.
func waitUntilOpenedTwice(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(testbound.Hang)
	for openCount(t, path) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("%s was not opened by the waiter", path)
		}
		time.Sleep(time.Millisecond)
	}
}

func openCount(t *testing.T, path string) int {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && target == path {
			n++
		}
	}
	return n
}
