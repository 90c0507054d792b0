package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/engine/remote"
)

// TestARolledBackRemoteHeadIsRefused puts an older copy of a task's head
// back on the remote, as whoever can write the bucket could, and deletes
// it: every store that saw the newer head refuses to pull from or push to
// it, plain or encrypted (the old copy authenticates: it was sealed with
// the key).
func TestARolledBackRemoteHeadIsRefused(t *testing.T) {
	t.Parallel()
	eachRemote(t, func(t *testing.T, open func(*testing.T) (Backend, string)) {
		for _, enc := range []bool{false, true} {
			t.Run(fmt.Sprint("encrypted=", enc), func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				b, url := open(t)
				sb, key := pushSmall(t, b, url, enc)
				headKey, old := largestObject(t, b, "heads/")
				f, err := cloneEncrypted(t, sb, url, key)
				if err != nil {
					t.Fatal(err)
				}
				f.write("f0.bin", "two\n")
				f.save("two")
				if _, err := f.e.Push(ctx, sb, PushOptions{Remote: "origin"}); err != nil {
					t.Fatal(err)
				}
				g, err := cloneEncrypted(t, sb, url, key)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := b.Put(ctx, headKey, bytes.NewReader(old), int64(len(old)), remote.Condition{}); err != nil {
					t.Fatal(err)
				}
				assertRolledBack(t, "pull", func() error {
					_, err := g.e.Pull(ctx, sb, PullOptions{Remote: "origin"})
					return err
				})
				f.write("f0.bin", "three\n")
				f.save("three")
				assertRolledBack(t, "push", func() error {
					_, err := f.e.Push(ctx, sb, PushOptions{Remote: "origin"})
					return err
				})
				// A store that never saw the newer head cannot tell.
				if h, err := cloneEncrypted(t, sb, url, key); err != nil {
					t.Fatalf("clone of the rolled back remote by a new store: %v", err)
				} else if n := len(mustList(t, h.e).Checkpoints); n != 1 {
					t.Fatalf("the new store's clone has %d checkpoints, want the 1 of the old head", n)
				}
				if err := b.Delete(ctx, headKey); err != nil {
					t.Fatal(err)
				}
				assertRolledBack(t, "pull of a deleted head", func() error {
					_, err := g.e.Pull(ctx, sb, PullOptions{Remote: "origin"})
					return err
				})
			})
		}
	})
}

func mustList(t *testing.T, e *Engine) *Log {
	t.Helper()
	l, err := e.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func assertRolledBack(t *testing.T, what string, op func() error) {
	t.Helper()
	err := op()
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "rolled back") {
		t.Fatalf("%s of a rolled back head: %v, want ErrCorrupt saying it was rolled back", what, err)
	}
}
