//go:build unix

package engine

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ckpt/ckpt/engine/remote"
	"github.com/ckpt/ckpt/internal/testtree"
)

// seaweed is a SeaweedFS cluster of the test's own (.ci/seaweedfs/start),
// so that killing its processes disturbs no other test.
type seaweed struct {
	dir string
	env map[string]string
}

// startSeaweed starts a cluster on ports of its own. It needs the weed
// binary CI builds, so it runs where CKPT_TEST_S3 says a SeaweedFS is up.
func startSeaweed(t *testing.T) *seaweed {
	t.Helper()
	if os.Getenv("CKPT_TEST_S3") == "" {
		t.Skip("CKPT_TEST_S3 is not set: no SeaweedFS build to start a cluster of this test's own (see .ci/seaweedfs/start)")
	}
	script, err := filepath.Abs("../.ci/seaweedfs/start")
	if err != nil {
		t.Fatal(err)
	}
	port := 29000 + 10*mrand.IntN(90)
	cmd := exec.Command(script)
	cmd.Env = append(os.Environ(), "CKPT_SEAWEEDFS_PORT="+strconv.Itoa(port))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("start seaweedfs: %v\n%s", err, stderr.String())
	}
	s := &seaweed{env: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "export "), "=")
		if ok {
			s.env[k] = strings.Trim(v, "'")
		}
	}
	s.dir = s.env["CKPT_SEAWEEDFS_DIR"]
	t.Cleanup(func() {
		if out, err := exec.Command(filepath.Join(filepath.Dir(script), "stop"), s.dir).CombinedOutput(); err != nil {
			t.Errorf("stop seaweedfs: %v\n%s", err, out)
		}
	})
	return s
}

// backend opens a fresh prefix of the cluster's bucket.
func (s *seaweed) backend(t *testing.T) (Backend, string) {
	t.Helper()
	url := s.env["CKPT_TEST_S3"] + "/kill-" + strconv.Itoa(mrand.IntN(1e9))
	b, err := remote.Open(context.Background(), url, remote.ConfigFromEnv(func(k string) string { return s.env[k] }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b, url
}

// kill stops process name (s3, volume) of the cluster at once.
func (s *seaweed) kill(t *testing.T, name string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.dir, name+".pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Not our child, so it may linger as a zombie: wait a little for it
	// to go, then go on (a killed process serves nothing either way).
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
}

// restart starts process name again and waits until the gateway serves
// a listing.
func (s *seaweed) restart(t *testing.T, name string, b Backend) {
	t.Helper()
	if out, err := exec.Command(filepath.Join(s.dir, name+".run")).CombinedOutput(); err != nil {
		t.Fatalf("restart %s: %v\n%s", name, err, out)
	}
	deadline := time.Now().Add(60 * time.Second)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		probe := []byte("probe")
		_, err := b.Put(context.Background(), "probe/"+name, bytes.NewReader(probe), int64(len(probe)), remote.Condition{})
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not serving again after restart: %v", name, err)
		}
		<-tick.C
	}
}

// killingBackend kills a cluster process as its first Put succeeds, while
// the Puts running beside it are still under way.
type killingBackend struct {
	Backend
	done atomic.Int64
	kill func()
}

func (k *killingBackend) Put(ctx context.Context, key string, r io.Reader, size int64, cond remote.Condition) (string, error) {
	etag, err := k.Backend.Put(ctx, key, r, size, cond)
	if err == nil && k.done.Add(1) == 1 {
		k.kill()
	}
	return etag, err
}

func TestPushSurvivesTheS3GatewayOrAVolumeServerDyingMidPush(t *testing.T) {
	sw := startSeaweed(t)
	tree := syncTree()
	r := mrand.New(mrand.NewPCG(3, 4))
	for i := range 3 {
		big := make([]byte, 12<<20)
		for j := range big {
			big[j] = byte(r.Uint32())
		}
		tree[fmt.Sprintf("big%d.dat", i)] = testtree.File{Content: string(big)}
	}
	for _, victim := range []string{"s3", "volume"} {
		t.Run(victim, func(t *testing.T) {
			b, url := sw.backend(t)
			f := newSyncFixture(t, tree, Options{})
			f.save("one")
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			if err := f.e.AddRemote(ctx, "origin", url); err != nil {
				t.Fatal(err)
			}
			kb := &killingBackend{Backend: b, kill: func() { sw.kill(t, victim) }}
			if _, err := f.e.Push(ctx, kb, PushOptions{Remote: "origin"}); err == nil {
				t.Fatalf("push with the %s killed after the first put succeeded", victim)
			}
			sw.restart(t, victim, b)
			cb := &countingBackend{Backend: b}
			if _, err := f.e.Push(ctx, cb, PushOptions{Remote: "origin"}); err != nil {
				t.Fatalf("push after restarting %s: %v", victim, err)
			}
			// The object uploaded before the kill is not uploaded again.
			if got, all := cb.bytes.Load(), int64(42<<20); got >= all {
				t.Fatalf("rerun uploaded %d bytes, the whole push is about %d", got, all)
			}
			g, _, err := cloneInto(t, b, url)
			if err != nil {
				t.Fatal(err)
			}
			assertSameTree(t, f.read(), g.read())
		})
	}
}
