package engine

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// An Engine is Awaited exactly while another Open of its store waits for
// the lock: not before, and not once that Open has given up or won.
func TestAwaitedWhileAnotherOpenWaits(t *testing.T) {
	t.Parallel()
	ws, store := t.TempDir(), filepath.Join(t.TempDir(), "store")
	ctx := context.Background()
	holder, err := Open(ctx, ws, Options{StoreDir: store})
	if err != nil {
		t.Fatal(err)
	}
	if holder.Awaited() {
		t.Fatal("awaited with no one waiting")
	}
	waitCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	opened := make(chan error, 1)
	go func() {
		_, err := Open(waitCtx, ws, Options{StoreDir: store, LockTimeout: time.Hour})
		opened <- err
	}()
	for !holder.Awaited() { // the waiter marks itself within one poll
		select {
		case err := <-opened:
			t.Fatalf("the second Open returned while the store was held: %v", err)
		case <-time.After(lockPollInterval):
		}
	}
	cancel()
	if err := <-opened; err == nil {
		t.Fatal("the cancelled Open succeeded")
	}
	if holder.Awaited() {
		t.Fatal("still awaited after the waiter gave up")
	}
	if err := holder.Close(); err != nil {
		t.Fatal(err)
	}
}
