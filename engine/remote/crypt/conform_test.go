package crypt

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/engine/remote"
	"github.com/ckpt/ckpt/engine/remote/remotetest"
)

// cheapCost keeps argon2id fast in tests; production refuses it.
var cheapCost = kdfCost{Time: 1, MemoryKiB: 64, Threads: 1}

func openDir(t *testing.T, dir string) remote.Backend {
	t.Helper()
	b, err := remote.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func testKey(t *testing.T) *Key {
	t.Helper()
	secret := make([]byte, KeySize)
	rand.Read(secret)
	k, err := ParseKey(secret)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestEncryptedFileBackendConforms(t *testing.T) {
	t.Parallel()
	k := testKey(t)
	remotetest.Run(t, func(t *testing.T) remote.Backend { return Wrap(openDir(t, t.TempDir()), k) })
}

// The params object sits among the sealed ones on a passphrase remote; the
// suite's listings show that the wrapped backend hides it.
func TestEncryptedFileBackendWithPassphraseConforms(t *testing.T) {
	t.Parallel()
	remotetest.Run(t, func(t *testing.T) remote.Backend {
		raw := openDir(t, t.TempDir())
		k, err := passphraseKey(context.Background(), raw, []byte("correct horse"), cheapCost)
		if err != nil {
			t.Fatal(err)
		}
		return Wrap(raw, k)
	})
}

// TestEncryptedS3BackendConforms runs the suite over an S3-compatible
// service when CKPT_TEST_S3 names a bucket on it, as remote's own S3 test
// does (.ci/seaweedfs/start prints the variables for a local SeaweedFS).
func TestEncryptedS3BackendConforms(t *testing.T) {
	base := os.Getenv("CKPT_TEST_S3")
	if base == "" {
		t.Skip("CKPT_TEST_S3 is not set: no S3 service to test against (see .ci/seaweedfs/start)")
	}
	cfg := remote.ConfigFromEnv(os.Getenv)
	cfg.PartSize = 5 << 20
	k := testKey(t)
	run := rand.Text()[:10]
	remotetest.Run(t, func(t *testing.T) remote.Backend {
		name := t.Name()[strings.LastIndexByte(t.Name(), '/')+1:]
		url := fmt.Sprintf("%s/ckpt-crypttest-%s/%s", strings.TrimSuffix(base, "/"), run, name)
		raw, err := remote.Open(context.Background(), url, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { emptyAndClose(t, raw) })
		return Wrap(raw, k)
	})
}

// emptyAndClose deletes every object of b, one page at a time, then closes
// it.
func emptyAndClose(t *testing.T, b remote.Backend) {
	ctx := context.Background()
	defer b.Close()
	for after := ""; ; {
		page, err := b.List(ctx, "", after, 0)
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		for _, o := range page.Objects {
			if err := b.Delete(ctx, o.Key); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
		if after = page.Next; after == "" {
			return
		}
	}
}
