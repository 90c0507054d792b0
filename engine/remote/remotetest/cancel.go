package remotetest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/ckpt/ckpt/engine/remote"
)

func testCancelled(t *testing.T, b remote.Backend) {
	put(t, b, "obj", []byte("data"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := map[string]func() error{
		"Put": func() error {
			_, err := b.Put(ctx, "new", bytes.NewReader([]byte("x")), 1, remote.Condition{})
			return err
		},
		"Get": func() error {
			rc, _, err := b.Get(ctx, "obj")
			if err == nil {
				rc.Close()
			}
			return err
		},
		"GetRange": func() error {
			rc, err := b.GetRange(ctx, "obj", 0, 1)
			if err == nil {
				rc.Close()
			}
			return err
		},
		"Stat": func() error {
			_, err := b.Stat(ctx, "obj")
			return err
		},
		"List": func() error {
			_, err := b.List(ctx, "", "", 0)
			return err
		},
		"Delete": func() error { return b.Delete(ctx, "obj") },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context = %v, want context.Canceled", name, err)
		}
	}
	wantNotFound(t, b, "new")
	wantContent(t, b, "obj", []byte("data"))
}

// cancellingReader cancels its context once it has passed on after bytes,
// then keeps serving data as a slow network would.
type cancellingReader struct {
	r      io.Reader
	after  int
	read   int
	cancel context.CancelFunc
}

func (c *cancellingReader) Read(p []byte) (int, error) {
	if c.read >= c.after {
		c.cancel()
	}
	n, err := c.r.Read(p)
	c.read += n
	return n, err
}

func testCancelMidPut(t *testing.T, b remote.Backend) {
	for _, key := range []string{"fresh", "kept"} {
		if key == "kept" {
			put(t, b, key, []byte("old"))
		}
		ctx, cancel := context.WithCancel(context.Background())
		data := content(key, MultipartSize)
		r := &cancellingReader{r: bytes.NewReader(data), after: 1 << 20, cancel: cancel}
		_, err := b.Put(ctx, key, r, int64(len(data)), remote.Condition{})
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Put(%q) cancelled mid-stream = %v, want context.Canceled", key, err)
		}
	}
	wantNotFound(t, b, "fresh")
	wantContent(t, b, "kept", []byte("old"))
}

func testCancelMidGet(t *testing.T, b remote.Backend) {
	data := content("get", MultipartSize)
	put(t, b, "big", data)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rc, _, err := b.Get(ctx, "big")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	defer rc.Close()
	if _, err := io.ReadFull(rc, make([]byte, 1000)); err != nil {
		t.Fatalf("read: %v", err)
	}
	cancel()
	n, err := io.Copy(io.Discard, rc)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("read after cancel = %d bytes, %v; want context.Canceled", n, err)
	}
}
