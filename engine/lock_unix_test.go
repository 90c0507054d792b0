//go:build unix

package engine

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// MustExist does not bring back a store removed while Open waited for its
// lock (a store in use can be removed only where open files can be).
func TestOpenMustExistStoreRemovedWhileWaiting(t *testing.T) {
	t.Parallel()
	ws, store := t.TempDir(), filepath.Join(t.TempDir(), "store")
	e, err := Open(context.Background(), ws, Options{StoreDir: store})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	held := holdLock(t, filepath.Join(store, "lock"), "pid 1 (test)\n")
	if _, err := Open(context.Background(), ws, Options{StoreDir: store, MustExist: true}); !errors.Is(err, ErrBusy) {
		t.Fatalf("open of a held store: %v, want busy", err)
	}
	waited := make(chan error, 1)
	go func() {
		e, err := Open(context.Background(), ws, Options{StoreDir: store, MustExist: true, LockTimeout: time.Minute})
		if err == nil {
			e.Close()
		}
		waited <- err
	}()
	// The store goes while its lock is held; whether the waiter opened the
	// lock file before (and finds no index under the lock) or after (and
	// finds no lock file), it must not bring the store back.
	if err := os.RemoveAll(store); err != nil {
		t.Fatal(err)
	}
	held.Close()
	if err := <-waited; !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("open of a store removed while waiting: %v, want fs.ErrNotExist", err)
	}
	if _, err := os.Stat(filepath.Join(store, "index")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the store was created again: %v", err)
	}
}

// A lock won on a lock file that was replaced while waiting is not kept:
// the waiter turns to the file now at the path, and its holder.
func TestLockWonOnAReplacedFileIsNotKept(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "lock")
	old := holdLock(t, path, "pid 1 (old)\n")
	got := make(chan error, 1)
	go func() {
		l, err := acquireLock(context.Background(), path, "waiter", time.Second, false)
		if err == nil {
			l.release()
		}
		got <- err
	}()
	if err := os.Rename(path, path+".removed"); err != nil {
		t.Fatal(err)
	}
	replacement := holdLock(t, path, "pid 2 (new)\n")
	defer replacement.Close()
	old.Close()
	var busy *BusyError
	if err := <-got; !errors.As(err, &busy) || busy.Holder != "pid 2 (new)" {
		t.Fatalf("waiter: %v, want busy naming the replacement's holder", err)
	}
}
