package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/engine/remote"
	"github.com/ckpt/ckpt/internal/testbound"
	"github.com/ckpt/ckpt/internal/testtree"
)

// smallSyncTree is a few incompressible files: one data object of several
// records, cheap to push and clone many times.
func smallSyncTree() testtree.Dir {
	r := mrand.New(mrand.NewPCG(3, 4))
	d := testtree.Dir{}
	for i := range 4 {
		b := make([]byte, 20<<10)
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		d[fmt.Sprintf("f%d.bin", i)] = testtree.File{Content: string(b)}
	}
	return d
}

// largestObject returns the key and bytes of the largest object under
// prefix.
func largestObject(t *testing.T, b Backend, prefix string) (string, []byte) {
	t.Helper()
	ctx := context.Background()
	page, err := b.List(ctx, prefix, "", 0)
	if err != nil || len(page.Objects) == 0 {
		t.Fatalf("list %s: %v %v", prefix, page, err)
	}
	key, size := "", int64(-1)
	for _, o := range page.Objects {
		if o.Size > size {
			key, size = o.Key, o.Size
		}
	}
	rc, _, err := b.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return key, data
}

// truncateObject replaces the largest object under prefix with its first
// keep(len) bytes.
func truncateObject(t *testing.T, b Backend, prefix string, keep func(int) int) {
	t.Helper()
	key, data := largestObject(t, b, prefix)
	data = data[:keep(len(data))]
	if _, err := b.Put(context.Background(), key, bytes.NewReader(data), int64(len(data)), remote.Condition{}); err != nil {
		t.Fatal(err)
	}
}

// truncateFile cuts the largest file under dir/prefix (a file:// remote's
// directory) to size bytes, below the backend's own object header when
// size is small.
func truncateFile(t *testing.T, dir, prefix string, size int64) {
	t.Helper()
	path, most := "", int64(-1)
	err := filepath.WalkDir(filepath.Join(dir, prefix), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil && info.Size() > most {
			path, most = p, info.Size()
		}
		return err
	})
	if err != nil || path == "" {
		t.Fatalf("no file under %s: %v", prefix, err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

// truncation is a cut every remote object must be detected after.
type truncation struct {
	name string
	keep func(int) int
}

// truncations are to half, and with the long tests on also to nothing
// and one byte short.
func truncations() []truncation {
	half := truncation{"half", func(n int) int { return n / 2 }}
	if !testbound.LongTests() {
		return []truncation{half}
	}
	return []truncation{{"empty", func(int) int { return 0 }}, half, {"one byte short", func(n int) int { return n - 1 }}}
}

// assertCloneCorrupt clones b's default task and wants ErrCorrupt.
func assertCloneCorrupt(t *testing.T, b Backend, url string, key RemoteKey) {
	t.Helper()
	g := newFixture(t, testtree.Dir{})
	_, err := g.e.Clone(context.Background(), b, CloneOptions{URL: url, Key: key})
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("clone of a truncated remote: %v, want ErrCorrupt", err)
	}
}

// TestTruncatedRemoteObjectsAreCorrupt cuts every kind of remote object
// short, through the backend and, for a file:// remote, in the object
// file itself (through its header), plain and encrypted: a clone reports
// the remote corrupt every time.
func TestTruncatedRemoteObjectsAreCorrupt(t *testing.T) {
	t.Parallel()
	prefixes := []string{"data/", "meta/", "heads/"}
	eachRemote(t, func(t *testing.T, open func(*testing.T) (Backend, string)) {
		for _, enc := range []bool{false, true} {
			for _, prefix := range prefixes {
				for _, cut := range truncations() {
					t.Run(fmt.Sprintf("encrypted=%v/%s/%s", enc, strings.TrimSuffix(prefix, "/"), cut.name), func(t *testing.T) {
						t.Parallel()
						b, url := open(t)
						sb, key := pushSmall(t, b, url, enc)
						truncateObject(t, b, prefix, cut.keep)
						assertCloneCorrupt(t, sb, url, key)
					})
				}
			}
		}
	})
	for _, enc := range []bool{false, true} {
		for _, prefix := range prefixes {
			for _, size := range []int64{10, 50} {
				t.Run(fmt.Sprintf("file/encrypted=%v/%s/%d bytes", enc, strings.TrimSuffix(prefix, "/"), size), func(t *testing.T) {
					t.Parallel()
					b, dir, url := dirRemote(t)
					sb, key := pushSmall(t, b, url, enc)
					truncateFile(t, dir, prefix, size)
					assertCloneCorrupt(t, sb, url, key)
				})
			}
		}
	}
}

// pushSmall pushes smallSyncTree to b as "origin", encrypted with a new
// key file when enc is set, and returns the backend to clone through and
// the key to record.
func pushSmall(t *testing.T, b Backend, url string, enc bool) (Backend, RemoteKey) {
	t.Helper()
	f := newFixture(t, smallSyncTree())
	f.save("one")
	if !enc {
		pushAll(t, f, b, url)
		return b, RemoteKey{}
	}
	secret := RemoteSecret{KeyFile: newKeyFile(t)}
	key := RemoteKey{KeyFile: secret.KeyFile}
	sb := encrypt(t, b, secret)
	ctx := context.Background()
	if err := f.e.AddEncryptedRemote(ctx, "origin", url, key); err != nil {
		t.Fatal(err)
	}
	if _, err := f.e.Push(ctx, sb, PushOptions{Remote: "origin"}); err != nil {
		t.Fatalf("push: %v", err)
	}
	return sb, key
}
