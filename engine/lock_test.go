package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckpt/ckpt/internal/osfs"
)

// holdLock takes the lock file at path through an open file of its own, as
// another process would, and writes holder into it.
func holdLock(t *testing.T, path, holder string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := osfs.TryLock(f); !ok || err != nil {
		t.Fatalf("take the lock: %v %v", ok, err)
	}
	if _, err := f.WriteString(holder); err != nil {
		t.Fatal(err)
	}
	return f
}

// A lock that names its holder fails a non-waiting caller at once, naming
// the holder.
func TestLockNamedHolderFailsAtOnce(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "lock")
	held := holdLock(t, path, "pid 1 (ckpt serve)\n")
	defer held.Close()
	start := time.Now()
	_, err := acquireLock(context.Background(), path, holder{}, 0, false)
	var busy *BusyError
	if !errors.As(err, &busy) || busy.Holder != "pid 1 (ckpt serve)" {
		t.Fatalf("acquire: %v, want busy naming the holder", err)
	}
	if waited := time.Since(start); waited >= lockTransitionGrace {
		t.Fatalf("waited %v for a named holder with timeout 0", waited)
	}
}

// A nameless lock is in transition (its holder has cleared its name and is
// closing, while a forked child still shares the open file): a
// non-waiting caller waits for it to go instead of failing as busy.
func TestLockNamelessHolderIsWaitedFor(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "lock")
	held := holdLock(t, path, "")
	released := make(chan struct{})
	time.AfterFunc(50*time.Millisecond, func() {
		close(released)
		held.Close()
	})
	l, err := acquireLock(context.Background(), path, holder{command: "test"}, 0, false)
	if err != nil {
		t.Fatalf("acquire while the nameless holder lets go: %v", err)
	}
	defer l.release()
	select {
	case <-released:
	default:
		t.Fatal("acquired while the other open file still held the lock")
	}
}

// A nameless lock that never goes is reported busy after the grace.
func TestLockNamelessHolderFailsAfterGrace(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "lock")
	held := holdLock(t, path, "")
	defer held.Close()
	start := time.Now()
	_, err := acquireLock(context.Background(), path, holder{}, 0, false)
	var busy *BusyError
	if !errors.As(err, &busy) {
		t.Fatalf("acquire: %v, want busy", err)
	}
	if waited := time.Since(start); waited < lockTransitionGrace {
		t.Fatalf("gave up on a nameless holder after %v, before the grace", waited)
	}
}

// An Engine that gives way (Options.GivesWay) says so in its lock, and an
// Open with LockTimeout 0 that finds the store held by it waits for it to
// let go (here, as the CLI's background process does, once it sees the
// waiter) instead of failing as busy.
func TestOpenWaitsForAHolderThatGivesWay(t *testing.T) {
	t.Parallel()
	ws, store := t.TempDir(), filepath.Join(t.TempDir(), "store")
	ctx := context.Background()
	held, err := Open(ctx, ws, Options{StoreDir: store, GivesWay: true, Command: "ckpt background-recompress"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { held.Close() })
	line, err := os.ReadFile(filepath.Join(store, lockName))
	if name, givesWay := parseHolder(strings.TrimSpace(string(line))); err != nil || !givesWay || name != fmt.Sprintf("pid %d (ckpt background-recompress)", os.Getpid()) {
		t.Fatalf("lock of a holder that gives way: %q, %v", line, err)
	}
	closed := make(chan error, 1)
	opened := make(chan struct{})
	defer close(opened)
	go func() {
		for !held.Awaited() {
			select {
			case <-opened: // the Open below returned without waiting
				closed <- nil
				return
			case <-time.After(5 * time.Millisecond): // until the waiter marks itself: a condition, not a duration
			}
		}
		closed <- held.Close()
	}()
	e, err := Open(ctx, ws, Options{StoreDir: store, LockTimeout: 0})
	if err != nil {
		t.Fatalf("open with LockTimeout 0 while a holder that gives way holds the store: %v", err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	e.Close()
}

// A holder that gives way but does not is reported busy after the grace,
// named without the mark (which only counts after the pid, whatever the
// command says).
func TestLockHolderThatGivesWayFailsAfterGrace(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "lock")
	held := holdLock(t, path, "pid 1"+givesWayMark+" (ckpt background-recompress "+givesWayMark+")\n")
	defer held.Close()
	start := time.Now()
	_, err := acquireLock(context.Background(), path, holder{}, 0, false)
	var busy *BusyError
	if !errors.As(err, &busy) || busy.Holder != "pid 1 (ckpt background-recompress "+givesWayMark+")" {
		t.Fatalf("acquire: %v, want busy naming the holder", err)
	}
	if waited := time.Since(start); waited < yieldGrace {
		t.Fatalf("gave up on a holder that gives way after %v, before the grace", waited)
	}
}

// MustExist opens a store that exists and fails, creating nothing, where
// there is none.
func TestOpenMustExistNeverCreatesAStore(t *testing.T) {
	t.Parallel()
	ws, parent := t.TempDir(), t.TempDir()
	store := filepath.Join(parent, "store")
	opts := Options{StoreDir: store, MustExist: true}
	if _, err := Open(context.Background(), ws, opts); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("open of a missing store: %v, want fs.ErrNotExist", err)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 0 {
		t.Fatalf("the failed open left %d entries", len(ents))
	}

	e, err := Open(context.Background(), ws, Options{StoreDir: store})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	if e, err = Open(context.Background(), ws, opts); err != nil {
		t.Fatalf("open of an existing store: %v", err)
	}
	e.Close()
}

// Taking and letting go of a store's lock dates its lock file: what a
// background process reads to wait for a quiet store.
func TestLastLockChangeDatesEveryOpenAndClose(t *testing.T) {
	t.Parallel()
	ws, store := t.TempDir(), filepath.Join(t.TempDir(), "store")
	if _, err := LastLockChange(store); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no store: %v, want not exist", err)
	}
	e, err := Open(context.Background(), ws, Options{StoreDir: store})
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(store, lockName), old, old); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	changed, err := LastLockChange(store)
	if err != nil || !changed.After(old.Add(time.Minute)) {
		t.Fatalf("after Close: %v, %v; want later than %v", changed, err, old)
	}
}
