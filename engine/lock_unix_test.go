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
