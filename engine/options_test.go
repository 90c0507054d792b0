package engine

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/ckpt/ckpt/walker"
)

// TestOpenRefusesMeaninglessOptions checks that Open refuses an unknown
// profile and a negative file-size cap other than NoMaxFileSize, before it
// touches the store.
func TestOpenRefusesMeaninglessOptions(t *testing.T) {
	t.Parallel()
	for _, opts := range []Options{{Profile: "nope"}, {MaxFileSize: -5}, {MaxFileSize: -1 << 40}} {
		opts.StoreDir = filepath.Join(t.TempDir(), "store")
		e, err := Open(context.Background(), t.TempDir(), opts)
		if !errors.Is(err, ErrBadRequest) {
			if e != nil {
				e.Close()
			}
			t.Errorf("Open(%+v) = %v, want ErrBadRequest", opts, err)
		}
	}
	for _, opts := range []Options{{Profile: "none"}, {MaxFileSize: NoMaxFileSize}, {LockTimeout: -1}} {
		opts.StoreDir = filepath.Join(t.TempDir(), "store")
		e, err := Open(context.Background(), t.TempDir(), opts)
		if err != nil {
			t.Fatalf("Open(%+v): %v", opts, err)
		}
		e.Close()
	}
}

// The public default is the walker's: one cap, named twice only because
// go doc must not show an internal constant.
func TestDefaultMaxFileSizeIsTheWalkers(t *testing.T) {
	t.Parallel()
	if DefaultMaxFileSize != walker.DefaultMaxFileSize {
		t.Fatalf("DefaultMaxFileSize %d, walker's %d", DefaultMaxFileSize, walker.DefaultMaxFileSize)
	}
}
