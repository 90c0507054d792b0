package engine

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ckpt/ckpt/engine/internal/restore"
	"github.com/ckpt/ckpt/engine/internal/save"
	"github.com/ckpt/ckpt/internal/blindspot"
	"github.com/ckpt/ckpt/internal/testbound"
	"github.com/ckpt/ckpt/objects"
)

// vouchWorld is a refreshWorld whose refresher waits until the test lets
// it (or a write tells it to give way), and which records what each of
// the watched Engine's scans saw.
type vouchWorld struct {
	*refreshWorld
	release chan struct{}
	scans   chan *save.Snapshot
}

func newVouchWorld(t *testing.T, opts Options) *vouchWorld {
	v := &vouchWorld{release: make(chan struct{}), scans: make(chan *save.Snapshot, 64)}
	opts.hooks.beforeRefresh = func(ctx context.Context) {
		select {
		case <-v.release:
		case <-ctx.Done():
		case <-time.After(testbound.Hang):
			t.Errorf("refresh held %v", testbound.Hang)
		}
	}
	opts.hooks.afterScan = func(s *save.Snapshot) { v.scans <- s }
	v.refreshWorld = newRefreshWorld(t, opts)
	// A FIFO is skipped: a vouched save reports it as a walk would.
	if err := syscall.Mkfifo(filepath.Join(v.ws, "top", "d004", "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { close(v.release) })
	return v
}

// lastScan is the snapshot of the watched Engine's latest scan.
func (v *vouchWorld) lastScan() *save.Snapshot {
	var last *save.Snapshot
	for {
		select {
		case s := <-v.scans:
			last = s
		default:
			return last
		}
	}
}

// saveVouched saves with both Engines and checks that the watched one
// walked nothing (it listed no file and found no directory changed: a
// save that re-reads only directories holding no file lists none) and
// reported what the cold one did.
func (v *vouchWorld) saveVouched(what string) (objects.ID, *SaveResult) {
	v.t.Helper()
	v.lastScan()
	root, res := v.save()
	snap := v.lastScan()
	if snap == nil {
		v.t.Fatalf("%s: no scan", what)
	}
	if changed := len(snap.Trees) + len(snap.Caches) + len(snap.GoneDirs); snap.Files.Load() != 0 || changed > 0 || !snap.Partial() || res.Stats.BytesHashed != 0 {
		v.t.Fatalf("%s: the save walked (%d files listed, %d directories found changed, %d bytes read); want the restore's vouch",
			what, snap.Files.Load(), changed, res.Stats.BytesHashed)
	}
	if cold := v.coldSaved; !slices.Equal(res.Skipped, cold.Skipped) || len(res.Skipped) != 1 {
		v.t.Fatalf("%s: skipped %+v, a cold save %+v", what, res.Skipped, cold.Skipped)
	}
	return root, res
}

// A restore whose events were all its own vouches for its target: the
// save right after it (before the refresh) walks nothing and captures what
// a cold save captures, and so does the redo's; a change made after the
// restore ends the vouch, and the save reads it.
func TestRestoreVouchesForItsTarget(t *testing.T) {
	v := newVouchWorld(t, Options{})
	firstRoot, first := v.save()
	v.edit("edited")
	secondRoot, second := v.save()
	v.restore(first.ID)
	if root, res := v.saveVouched("after the restore"); res.Created || root != firstRoot {
		t.Fatalf("save after the restore: created %v, want the first checkpoint's root", res.Created)
	}
	v.restore(second.ID) // its backup is vouched for too
	if root, res := v.saveVouched("after the redo"); res.Created || root != secondRoot {
		t.Fatalf("save after the redo: created %v, want the second checkpoint's root", res.Created)
	}
	v.write("top/d003/f001.txt", "changed after the redo")
	if _, res := v.save(); !res.Created || res.Stats.BytesHashed == 0 {
		t.Fatalf("save after a change: created %v, read %d bytes; want the change read", res.Created, res.Stats.BytesHashed)
	}
}

// meddler is a restore FS through which another writer changes the
// workspace while the restore runs: after each rename, removal and
// directory made that succeeded, meddle is told the operation ("rename",
// "remove", "mkdir") and the name, until it says it meddled.
type meddler struct {
	restore.FS
	meddle func(op, name string) bool
	mu     sync.Mutex // renames run in parallel
	done   bool
}

func (m *meddler) after(op, name string, err error) error {
	if err != nil || m.meddle == nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.done {
		m.done = m.meddle(op, name)
	}
	return nil
}

func (m *meddler) Rename(oldname, newname string) error {
	return m.after("rename", newname, m.FS.Rename(oldname, newname))
}

func (m *meddler) Remove(name string) error { return m.after("remove", name, m.FS.Remove(name)) }

func (m *meddler) Mkdir(name string, perm fs.FileMode) error {
	return m.after("mkdir", name, m.FS.Mkdir(name, perm))
}

// A write by someone else while the restore runs, to a file it restored
// (the same size, so the stamp may not tell) or anywhere else, is not the
// restore's own: nothing is vouched for, and the next save captures the
// write, as a cold save does.
func TestRestoreVouchesForNothingAnotherWriterTouched(t *testing.T) {
	for _, c := range []struct {
		name   string
		meddle func(w *refreshWorld, renamed string)
	}{
		{"the restored file rewritten", func(w *refreshWorld, renamed string) {
			data, err := os.ReadFile(filepath.Join(w.ws, renamed))
			if err != nil {
				w.t.Error(err)
			}
			data[0] ^= 1
			if err := os.WriteFile(filepath.Join(w.ws, renamed), data, 0o644); err != nil {
				w.t.Error(err)
			}
		}},
		{"a new file elsewhere", func(w *refreshWorld, _ string) { w.write("top/d010/foreign.txt", "x") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			var v *vouchWorld
			opts := Options{}
			opts.hooks.wrapRestoreFS = func(fsys restore.FS) restore.FS {
				return &meddler{FS: fsys, meddle: func(op, name string) bool {
					if op != "rename" {
						return false
					}
					c.meddle(v.refreshWorld, name)
					return true
				}}
			}
			v = newVouchWorld(t, opts)
			root, first := v.save()
			v.edit("edited")
			v.save()
			v.restore(first.ID)
			v.lastScan()
			got, res := v.save() // against a cold save
			if got == root || !res.Created || res.Stats.BytesHashed == 0 {
				t.Fatalf("save after a restore another writer meddled with: root %s (restored %s), created %v, read %d bytes", got.Short(), root.Short(), res.Created, res.Stats.BytesHashed)
			}
		})
	}
}

// A change no event reports (a write through a shared mapping still in
// place) to a file a restore wrote ends the restore's vouch once a walk
// meets it: the refresh after the restore, or a re-verification. The save
// after either captures the change, as a cold save does.
func TestAWalkEndsARestoresVouch(t *testing.T) {
	for _, by := range []string{"refresh", "re-verification"} {
		t.Run(by, func(t *testing.T) {
			v := newVouchWorld(t, Options{})
			root, first := v.save()
			v.edit("edited")
			v.save()
			v.restore(first.ID)
			m, err := blindspot.MmapRewrite(filepath.Join(v.ws, "top", "d003", "f001.txt"), []byte("X"), true)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Munmap(m)
			if by == "refresh" {
				v.release <- struct{}{}
				if v.awaitRefresh() {
					t.Fatal("the refresh committed the records of a workspace that changed")
				}
			} else if _, err := v.e.Reverify(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got, _ := v.save(); got == root {
				t.Fatalf("the save after the %s kept the restored root", by)
			}
		})
	}
}

// addDir adds top/newdir: 20 files, and a subdirectory with 3.
func (v *vouchWorld) addDir() {
	v.t.Helper()
	if err := os.MkdirAll(filepath.Join(v.ws, "top", "newdir", "sub"), 0o755); err != nil {
		v.t.Fatal(err)
	}
	for i := range 20 {
		v.write(fmt.Sprintf("top/newdir/f%03d.txt", i), fmt.Sprintf("new %d", i))
	}
	for i := range 3 {
		v.write(fmt.Sprintf("top/newdir/sub/g%03d.txt", i), fmt.Sprintf("new sub %d", i))
	}
}

// A restore whose plan removes a directory with its files vouches for its
// target as one that only writes files does: the save after it walks
// nothing and captures what a cold save does.
func TestRestoreVouchesAcrossADirectoryRemoved(t *testing.T) {
	v := newVouchWorld(t, Options{})
	firstRoot, first := v.save()
	v.addDir()
	_, second := v.save()
	v.restore(first.ID)
	if root, res := v.saveVouched("after the directory's removal"); res.Created || root != firstRoot {
		t.Fatalf("save after the restore: created %v, want the first checkpoint's root", res.Created)
	}
	v.restore(second.ID)
	v.save() // against a cold save
}

// A file another writer drops into a directory while a restore removes
// it, or anywhere while it does, is not the restore's own: nothing is
// vouched for, and the next save captures the file, as a cold save does.
func TestRestoreVouchesForNoDirectoryAnotherWriterTouched(t *testing.T) {
	inNewdir := func(name string) bool { return name == "top/newdir" || strings.HasPrefix(name, "top/newdir/") }
	for _, c := range []struct {
		name string
		// at says whether to meddle after op on name, and into which directory.
		at func(op, name string) (string, bool)
	}{
		{"into the directory removed", func(op, name string) (string, bool) {
			return "top/newdir", op == "remove" && inNewdir(name)
		}},
		{"elsewhere while a directory is removed", func(op, name string) (string, bool) {
			return "top/d010", op == "remove" && inNewdir(name)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var v *vouchWorld
			armed := false
			opts := Options{}
			opts.hooks.wrapRestoreFS = func(fsys restore.FS) restore.FS {
				return &meddler{FS: fsys, meddle: func(op, name string) bool {
					dir, ok := c.at(op, name)
					if ok && armed {
						v.write(dir+"/foreign.txt", "x")
					}
					return ok && armed
				}}
			}
			v = newVouchWorld(t, opts)
			_, first := v.save()
			v.addDir()
			v.save()
			armed = true
			v.restore(first.ID)
			v.lastScan()
			if _, res := v.save(); !res.Created || res.Stats.BytesHashed == 0 { // against a cold save
				t.Fatalf("save after a restore another writer meddled with: created %v, read %d bytes; want the foreign file read", res.Created, res.Stats.BytesHashed)
			}
		})
	}
}
