package remote_test

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

// TestS3BackendConforms runs the suite against a real S3-compatible
// service when CKPT_TEST_S3 names a bucket on it (s3://bucket[/prefix]),
// with the endpoint and credentials in the usual AWS_* variables;
// .ci/seaweedfs/start prints all of them for a local SeaweedFS. Each subtest
// works under a fresh prefix and deletes what it wrote.
func TestS3BackendConforms(t *testing.T) {
	base := os.Getenv("CKPT_TEST_S3")
	if base == "" {
		t.Skip("CKPT_TEST_S3 is not set: no S3 service to test against (see .ci/seaweedfs/start)")
	}
	cfg := remote.ConfigFromEnv(os.Getenv)
	cfg.PartSize = 5 << 20 // so that remotetest.MultipartSize takes two parts
	run := rand.Text()[:10]
	remotetest.Run(t, func(t *testing.T) remote.Backend {
		url := fmt.Sprintf("%s/ckpt-remotetest-%s/%s", strings.TrimSuffix(base, "/"), run, t.Name()[strings.LastIndexByte(t.Name(), '/')+1:])
		b, err := remote.Open(context.Background(), url, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { deleteAll(t, b) })
		return b
	})
}

func deleteAll(t *testing.T, b remote.Backend) {
	ctx := context.Background()
	for {
		page, err := b.List(ctx, "", "", 0)
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		for _, o := range page.Objects {
			if err := b.Delete(ctx, o.Key); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
		if page.Next == "" {
			b.Close()
			return
		}
	}
}
