package engine

import (
	"context"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ckpt/ckpt/engine/remote"
	"github.com/ckpt/ckpt/internal/testbound"
)

// flakyBackend fails every Put while down is set.
type flakyBackend struct {
	Backend
	down atomic.Bool
}

func (f *flakyBackend) Put(ctx context.Context, key string, r io.Reader, size int64, cond remote.Condition) (string, error) {
	if f.down.Load() {
		return "", errInjected
	}
	return f.Backend.Put(ctx, key, r, size, cond)
}

// waitAutoPush waits (bounded) until the automatic push's state satisfies ok.
func waitAutoPush(t *testing.T, e *Engine, ok func(AutoPushStatus) bool) AutoPushStatus {
	t.Helper()
	deadline := time.Now().Add(testbound.Hang)
	for {
		st, on := e.AutoPushStatus()
		if !on {
			t.Fatal("automatic push not running")
		}
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("automatic push stuck at %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestAutoPushFollowsSavesAndRetriesAfterFailures(t *testing.T) {
	t.Parallel()
	b, url := remoteCases()[0].open(t)
	fb := &flakyBackend{Backend: b}
	f := newSyncFixture(t, syncTree(), Options{})
	ctx := context.Background()
	if err := f.e.AddRemote(ctx, "origin", url); err != nil {
		t.Fatal(err)
	}
	if err := f.e.StartAutoPush(fb, "origin"); err != nil {
		t.Fatal(err)
	}
	if err := f.e.StartAutoPush(fb, "origin"); err == nil {
		t.Fatal("a second StartAutoPush succeeded")
	}
	f.save("one")
	waitAutoPush(t, f.e, func(st AutoPushStatus) bool { return !st.LastPush.IsZero() && len(st.Pending) == 0 })

	fb.down.Store(true)
	f.write("src/a.go", "package a // two\n")
	f.save("two")
	st := waitAutoPush(t, f.e, func(st AutoPushStatus) bool { return st.Failures > 0 })
	if st.LastError == "" || len(st.Pending) != 1 || st.NextRetry.IsZero() {
		t.Fatalf("after a failed push: %+v", st)
	}
	fb.down.Store(false)
	waitAutoPush(t, f.e, func(st AutoPushStatus) bool { return st.Failures == 0 && len(st.Pending) == 0 })

	g, _, err := cloneInto(t, b, url)
	if err != nil {
		t.Fatal(err)
	}
	assertSameTree(t, f.read(), g.read())
}
