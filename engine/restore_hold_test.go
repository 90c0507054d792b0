package engine

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ckpt/ckpt/engine/internal/restore"
	"github.com/ckpt/ckpt/internal/testbound"
)

// holdLog is a restore.FS that logs, in order, the holds, renames and
// removals of a restore, and the closing of each file held.
type holdLog struct {
	restore.FS
	mu     sync.Mutex
	events []string
	held   map[string]os.FileInfo // the file each hold kept, by path
	closed sync.WaitGroup
}

func (h *holdLog) log(event string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, event)
}

func (h *holdLog) Hold(name string) io.Closer {
	c := h.FS.Hold(name)
	h.log("hold " + name)
	if c == nil {
		return nil
	}
	if f, ok := c.(*os.File); ok {
		if fi, err := f.Stat(); err == nil {
			h.mu.Lock()
			h.held[name] = fi
			h.mu.Unlock()
		}
	}
	h.closed.Add(1)
	return closerFunc(func() error {
		defer h.closed.Done()
		h.log("let go " + name)
		return c.Close()
	})
}

func (h *holdLog) Rename(oldname, newname string) error {
	h.log("rename " + newname)
	return h.FS.Rename(oldname, newname)
}

func (h *holdLog) Remove(name string) error {
	h.log("remove " + name)
	return h.FS.Remove(name)
}

type closerFunc func() error

func (c closerFunc) Close() error { return c() }

// A restore holds each file it replaces or removes, from before the
// rename or removal until after its last one (on Linux; elsewhere there is
// nothing to hold), so that freeing them costs the restore nothing: what
// is held is the file that was replaced, and every one is let go. A file
// created where the workspace held nothing is not looked for.
func TestRestoreHoldsWhatItReplacesUntilItEnds(t *testing.T) {
	t.Parallel()
	f := threeFilesChanged(t)
	before := map[string]os.FileInfo{}
	for _, p := range []string{"d/x", "d/y", "top", "d/e/z"} {
		fi, err := os.Lstat(filepath.Join(f.ws, filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		before[p] = fi
	}
	h := &holdLog{held: map[string]os.FileInfo{}}
	opts := Options{}
	opts.hooks.wrapRestoreFS = func(fsys restore.FS) restore.FS { h.FS = fsys; return h }
	f.open(opts)
	events := h.restore(t, f, "@1")
	last := 0 // the last rename or removal of a file
	for p := range before {
		i := max(slices.Index(events, "rename "+p), slices.Index(events, "remove "+p))
		if held := slices.Index(events, "hold "+p); i < 0 || held < 0 || held > i {
			t.Fatalf("%s not held before it was replaced or removed: %q", p, events)
		}
		last = max(last, i)
	}
	if runtime.GOOS == "linux" {
		for p, fi := range before {
			got, ok := h.held[p]
			if !ok || !os.SameFile(got, fi) {
				t.Fatalf("the restore held %v for %s, want the file it replaced", got, p)
			}
			if i := slices.Index(events, "let go "+p); i < last {
				t.Fatalf("%s let go before the restore's last change: %q", p, events)
			}
		}
	} else if len(h.held) != 0 { // no platform but Linux has a way to hold a file
		t.Fatalf("held %d files where the platform cannot hold one", len(h.held))
	}
	// The redo writes d/x, d/y and top again and creates d/e/z afresh.
	if events := h.restore(t, f, "@2"); slices.Contains(events, "hold d/e/z") || !slices.Contains(events, "hold d/x") {
		t.Fatalf("the redo held %q; want the replaced files, not the created one", events)
	}
}

// restore restores ref with f's Engine, waits until every file it held
// is let go, and returns the events logged meanwhile.
func (h *holdLog) restore(t *testing.T, f *fixture, ref string) []string {
	t.Helper()
	h.mu.Lock()
	h.events = nil
	h.mu.Unlock()
	f.restore(ref, RestoreOptions{})
	done := make(chan struct{})
	go func() { h.closed.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(testbound.Hang):
		t.Fatalf("files held by the restore of %s were not let go %v after it", ref, testbound.Hang)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.events)
}
