package watch

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// fenceTimeout bounds the wait for a fence's own change; past it the
// barrier cannot vouch for anything.
const fenceTimeout = 10_000 // milliseconds

// fence completes the ordering barrier under Wine. Windows reports a
// change inside the operation that makes it; Wine's server learns of it
// from inotify, in its own loop, so a change made before Changes may
// reach the watch handle only after the barrier's cancel. But Wine reads
// every watch from one inotify queue, first in, first out: once the
// server has reported a file the fence creates in a private directory
// (outside the workspace, watched by a handle of its own), every change
// made before it has reached the workspace's handle too.
type fence struct {
	dir string
	r   dirReader
	n   int
}

// underWine reports whether the process runs under Wine, whose ntdll
// exports wine_get_version.
func underWine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}

// newFence makes the private directory and opens its handle; nil when the
// process does not run under Wine.
func newFence() (*fence, error) {
	if !underWine() {
		return nil, nil
	}
	dir, err := os.MkdirTemp("", "ckpt-watch-fence")
	if err != nil {
		return nil, err
	}
	f := &fence{dir: dir}
	if err := f.r.open(dir); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := f.r.issue(); err != nil {
		f.close()
		return nil, err
	}
	return f, nil
}

// pass creates the next fence file and waits until the handle reports it.
// It returns false when that did not happen in time.
func (f *fence) pass() bool {
	f.n++
	name := fmt.Sprint("f", f.n)
	path := filepath.Join(f.dir, name)
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		return false
	}
	defer os.Remove(path)
	for {
		if !f.r.reading {
			if f.r.issue() != nil {
				return false
			}
		}
		if ev, _ := windows.WaitForSingleObject(f.r.ov.HEvent, fenceTimeout); ev != windows.WAIT_OBJECT_0 {
			return false
		}
		r := f.r.finish(true)
		if r.err != nil {
			return false
		}
		for action, n := range records(r.data) {
			if action == windows.FILE_ACTION_ADDED && n == name {
				return true
			}
		}
	}
}

func (f *fence) close() {
	f.r.release()
	os.RemoveAll(f.dir)
}
