package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ckpt/ckpt/internal/testbound"
	"github.com/ckpt/ckpt/objects"
)

// refreshWorld is a watched Engine over a workspace of 20 directories of
// 10 files, a cold Engine over the same files as the judge, and the
// refresher's reports.
type refreshWorld struct {
	t         *testing.T
	ws        string
	e, cold   *Engine
	refreshed chan bool
	// coldSaved is the cold Engine's result of the latest save.
	coldSaved *SaveResult
}

func newRefreshWorld(t *testing.T, opts Options) *refreshWorld {
	w := &refreshWorld{t: t, ws: t.TempDir(), refreshed: make(chan bool, 8)}
	writeWide(t, w.ws, 20)
	opts.Watch = true
	opts.hooks.refreshed = func(committed bool) { w.refreshed <- committed }
	opts.OnEvent = func(ev Event) {
		if ev.Type == EventError {
			t.Errorf("background error: %v", ev.Err)
		}
	}
	w.e = openAt(t, w.ws, opts)
	w.cold = openAt(t, w.ws, Options{})
	return w
}

// edit rewrites 5 files in 5 directories and adds 2.
func (w *refreshWorld) edit(version string) {
	w.t.Helper()
	for d := range 5 {
		w.write(fmt.Sprintf("top/d%03d/f%03d.txt", 3*d, d), version)
	}
	w.write("top/d001/new.txt", version)
	w.write("top/d019/new.txt", version)
}

func (w *refreshWorld) write(rel, content string) {
	w.t.Helper()
	if err := os.WriteFile(filepath.Join(w.ws, filepath.FromSlash(rel)), []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

func (w *refreshWorld) restore(id ID) {
	w.t.Helper()
	res, err := w.e.Restore(context.Background(), id.String(), RestoreOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	if len(res.Written)+len(res.Deleted) == 0 {
		w.t.Fatalf("restore of %s changed nothing", id.Short())
	}
}

// editAndRestore saves, edits, saves and restores the first checkpoint,
// whose root it returns.
func (w *refreshWorld) editAndRestore() objects.ID {
	w.t.Helper()
	root, first := w.save()
	w.edit("edited")
	w.save()
	w.restore(first.ID)
	return root
}

// awaitRefresh returns whether the refresh after a restore committed.
func (w *refreshWorld) awaitRefresh() bool {
	w.t.Helper()
	select {
	case committed := <-w.refreshed:
		return committed
	case <-time.After(testbound.Hang):
		w.t.Fatalf("no refresh %v after the restore", testbound.Hang)
		return false
	}
}

// save saves with the watched Engine and checks the root against a cold
// save's, which it keeps in coldSaved.
func (w *refreshWorld) save() (objects.ID, *SaveResult) {
	w.t.Helper()
	got, res := saveRoot(w.t, w.e)
	want, cold := saveRoot(w.t, w.cold)
	w.coldSaved = cold
	if got != want {
		w.t.Fatalf("watched save root %s, cold save root %s", got.Short(), want.Short())
	}
	return got, res
}

// After a restore, and after the redo, the refresher vouches for the
// files the restore wrote: the save that follows reads no file, and
// captures what a cold save captures. The records it took are past the
// racy window: a save after a change beside a restored file reads only
// the changed file.
func TestRefreshAfterRestoreSparesTheNextSave(t *testing.T) {
	w := newRefreshWorld(t, Options{})
	firstRoot, first := w.save()
	w.edit("edited")
	secondRoot, second := w.save()
	for i, step := range []struct {
		to   ID
		root objects.ID
	}{{first.ID, firstRoot}, {second.ID, secondRoot}} {
		w.restore(step.to)
		if !w.awaitRefresh() {
			t.Fatalf("the refresh after the restore of %s committed nothing", step.to.Short())
		}
		root, res := w.save()
		if res.Created || root != step.root {
			t.Fatalf("save after the restore of %s: created %v, root %s; want its root %s", step.to.Short(), res.Created, root.Short(), step.root.Short())
		}
		if res.Stats.BytesHashed != 0 {
			t.Fatalf("save after the restore of %s and its refresh read %d bytes, want none", step.to.Short(), res.Stats.BytesHashed)
		}
		// d003 and d006 hold a restored file (edit).
		w.write(fmt.Sprintf("top/d%03d/f009.txt", 3+3*i), "1")
		if _, res := w.save(); !res.Created || res.Stats.BytesHashed != 1 {
			t.Fatalf("save after a change beside a restored file: created %v, read %d bytes; want the 1 byte changed", res.Created, res.Stats.BytesHashed)
		}
	}
}

// A workspace changed between the restore and its refresh is left to the
// next save: the refresh commits nothing, and the save captures the change.
func TestRefreshLeavesAChangedWorkspaceToTheSave(t *testing.T) {
	var w *refreshWorld
	opts := Options{}
	opts.hooks.beforeRefresh = func(context.Context) { w.write("top/d002/f000.txt", "changed before the refresh") }
	w = newRefreshWorld(t, opts)
	w.editAndRestore()
	if w.awaitRefresh() {
		t.Fatal("a refresh of a workspace changed since the restore committed its records")
	}
	if _, res := w.save(); !res.Created {
		t.Fatal("the change made before the refresh was not saved")
	}
}

// A write that arrives while a refresh runs stops it and gets the lock;
// it needs no record the refresh would have committed (the restore
// vouched for its files), and nothing is reported as an error.
func TestRefreshGivesWayToAWrite(t *testing.T) {
	var w *refreshWorld
	opts := Options{}
	saved := saveOnGivingWay(t, &w, "refresh", &opts.hooks.beforeRefresh)
	w = newRefreshWorld(t, opts)
	firstRoot := w.editAndRestore()
	if w.awaitRefresh() {
		t.Fatal("a refresh that gave way committed its records")
	}
	res := <-saved
	if res == nil || res.Created || res.Stats.BytesHashed != 0 {
		t.Fatalf("the save the refresh gave way to: %+v; want no checkpoint, nothing read", res)
	}
	if root, _ := w.save(); root != firstRoot {
		t.Fatalf("root after the restore %s, want %s", root.Short(), firstRoot.Short())
	}
}

// saveOnGivingWay sets hook, run before a background work (named work) of
// *w's watched Engine, to start a save the first time and wait until the
// work is told to give way to it; the save's result arrives on the
// returned channel.
func saveOnGivingWay(t *testing.T, w **refreshWorld, work string, hook *func(context.Context)) <-chan *SaveResult {
	saved := make(chan *SaveResult, 1)
	var once sync.Once
	*hook = func(ctx context.Context) {
		once.Do(func() {
			go func() {
				res, err := (*w).e.Save(context.Background(), SaveOptions{})
				if err != nil {
					t.Error(err)
				}
				saved <- res
			}()
			select { // the save asks for the lock: the work is told to give way
			case <-ctx.Done():
			case <-time.After(testbound.Hang):
				t.Errorf("the %s was not told to give way %v after a save began", work, testbound.Hang)
			}
		})
	}
	return saved
}
