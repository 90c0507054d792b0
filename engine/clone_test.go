package engine

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ckpt/ckpt/internal/testtree"
)

// failingReads fails every ranged read while failing is set: a network
// that goes away once a pull has its metadata.
type failingReads struct {
	Backend
	failing atomic.Bool
}

func (f *failingReads) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	if f.failing.Load() {
		return nil, errInjected
	}
	return f.Backend.GetRange(ctx, key, off, n)
}

func TestACloneThatFailedFetchingBlobsFinishesWhenRunAgain(t *testing.T) {
	t.Parallel()
	eachRemote(t, func(t *testing.T, open func(*testing.T) (Backend, string)) {
		ctx := context.Background()
		b, url := open(t)
		f := newFixture(t, smallSyncTree())
		f.save("one")
		pushAll(t, f, b, url)
		fb := &failingReads{Backend: b}
		fb.failing.Store(true)
		g := newFixture(t, testtree.Dir{})
		opts := CloneOptions{URL: url}
		_, err := g.e.Clone(ctx, fb, opts)
		if !errors.Is(err, errInjected) || !errors.Is(err, ErrUnfinishedClone) {
			t.Fatalf("clone with the blobs unreachable: %v, want the injected failure and ErrUnfinishedClone", err)
		}
		if tasks, _ := g.e.db.Tasks(); len(tasks) != 1 || len(g.read()) != 0 {
			t.Fatalf("the failed clone left tasks %v and workspace %v; want the pulled task and no files", tasks, g.read())
		}
		for what, other := range map[string]CloneOptions{
			"another URL":  {URL: url + "/other"},
			"another task": {URL: url, Task: "other"},
			"another name": {URL: url, Remote: "upstream"},
		} {
			if _, err := g.e.Clone(ctx, b, other); !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), "unfinished clone") {
				t.Fatalf("a clone with %s into the unfinished one: %v, want ErrBadRequest naming it", what, err)
			}
		}
		fb.failing.Store(false)
		res, err := g.e.Clone(ctx, fb, opts)
		if err != nil {
			t.Fatalf("the same clone run again: %v", err)
		}
		assertSameTree(t, f.read(), g.read())
		if res.Restore.Fetched.Blobs == 0 || res.Pull.Head != f.save("again").ID {
			t.Fatalf("the finished clone: %+v", res)
		}
		if _, err := g.e.Clone(ctx, b, opts); !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), "new store") {
			t.Fatalf("a clone into a finished clone: %v, want ErrBadRequest", err)
		}
	})
}
