package remote_test

import (
	"testing"

	"github.com/ckpt/ckpt/internal/remote"
	"github.com/ckpt/ckpt/internal/remote/remotetest"
)

func TestFileBackendConforms(t *testing.T) {
	remotetest.Run(t, func(t *testing.T) remote.Backend {
		b, err := remote.OpenDir(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	})
}
