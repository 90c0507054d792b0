package engine

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ckpt/ckpt/engine/internal/restore"
	"github.com/ckpt/ckpt/internal/faultfs"
	"github.com/ckpt/ckpt/internal/storefs"
	"github.com/ckpt/ckpt/internal/testbound"
	"github.com/ckpt/ckpt/objects"
)

// headCommitWatch is a restore.FS that checks a restore's order against
// the index's sync of the head's commit (committing, closed when the
// index syncs its log once the restore renamed a file into place): no
// change to the workspace once that commit is under way, and the final
// flush of the workspace (a sync after a rename) not over before it
// began.
type headCommitWatch struct {
	restore.FS
	renamed    atomic.Bool
	committing chan struct{}
	once       sync.Once

	mu       sync.Mutex
	problems []string
}

func (w *headCommitWatch) problem(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.problems = append(w.problems, fmt.Sprintf(format, args...))
}

// indexSynced is the store seam's injector: a sync of the index's log
// after the restore's first rename is the head's commit.
func (w *headCommitWatch) indexSynced(op faultfs.Op) error {
	if op.Kind == faultfs.OpFileSync && strings.HasSuffix(op.Path, ".log") && w.renamed.Load() {
		w.once.Do(func() { close(w.committing) })
	}
	return nil
}

// change fails the test when the head's commit is under way.
func (w *headCommitWatch) change(what, name string) {
	select {
	case <-w.committing:
		w.problem("%s %s after the head's commit began", what, name)
	default:
	}
}

// finalSync waits, for a sync after a rename, until the head's commit
// began: a restore that moved the head only after its last flush never
// gets there.
func (w *headCommitWatch) finalSync(name string) {
	if !w.renamed.Load() {
		return
	}
	select {
	case <-w.committing:
	case <-time.After(testbound.Hang):
		w.problem("sync of %s after the renames: the head's commit had not begun %v later", name, testbound.Hang)
	}
}

func (w *headCommitWatch) Create(rel string) (restore.TempFile, error) {
	w.change("create", rel)
	return w.FS.Create(rel)
}

func (w *headCommitWatch) Rename(oldname, newname string) error {
	w.change("rename", newname)
	err := w.FS.Rename(oldname, newname)
	w.renamed.Store(true)
	return err
}

func (w *headCommitWatch) Remove(name string) error {
	w.change("remove", name)
	return w.FS.Remove(name)
}

func (w *headCommitWatch) Mkdir(name string, perm fs.FileMode) error {
	w.change("mkdir", name)
	return w.FS.Mkdir(name, perm)
}

func (w *headCommitWatch) Chmod(name string, mode fs.FileMode) error {
	w.change("chmod", name)
	return w.FS.Chmod(name, mode)
}

func (w *headCommitWatch) SyncDir(name string) error {
	w.finalSync(name)
	return w.FS.SyncDir(name)
}

func (w *headCommitWatch) SyncAll() error {
	w.finalSync("the file system")
	return w.FS.SyncAll()
}

// A restore moves the task's head once every file is in place, while it
// flushes the workspace: the index's commit and the workspace's last sync
// wait on the disk together. Each file synced before its rename, and
// (where syncfs is sound) the files staged and flushed at once: either
// way nothing in the workspace changes once the head's commit began, the
// last sync waits for it to begin, and the restore returns with the head
// at its target, the files as the target has them and no journal.
func TestRestoreMovesTheHeadWhileItFlushesTheWorkspace(t *testing.T) {
	t.Parallel()
	for _, cheap := range []bool{false, true} {
		t.Run(fmt.Sprintf("syncfs cheap %v", cheap), func(t *testing.T) {
			t.Parallel()
			f := threeFilesChanged(t)
			one := f.list().Checkpoints[0].ID
			// A plan that fails nothing, for its answer of whether a
			// syncfs is cheap.
			plan := newFaultPlan(-1, 0, nil)
			plan.syncAllCheap = cheap
			w := &headCommitWatch{committing: make(chan struct{})}
			opts := Options{}
			opts.hooks.wrapRestoreFS = func(fsys restore.FS) restore.FS { w.FS = plan.wrap(fsys); return w }
			opts.hooks.storeFS = faultfs.Wrap(storefs.OS, faultfs.InjectorFunc(w.indexSynced))
			f.open(opts)
			f.restore("@1", RestoreOptions{})
			if len(w.problems) > 0 {
				t.Fatal(strings.Join(w.problems, "\n"))
			}
			select {
			case <-w.committing:
			default:
				t.Fatal("the index synced no log after the restore's renames")
			}
			if head := f.list().Head; head != one {
				t.Fatalf("head %s after the restore, want @1 %s", head.Short(), one.Short())
			}
			if pendingOnDisk(t, f.store) {
				t.Fatal("journal pending after the restore")
			}
			if got := f.read(); got["top"].Content != "1" || got["d/x"].Content != "1" || got["d/e/z"].Kind != "" {
				t.Fatalf("workspace after the restore: %v", got)
			}
		})
	}
}

// list is the default task's log.
func (f *fixture) list() *Log {
	f.t.Helper()
	log, err := f.e.List(context.Background(), "")
	if err != nil {
		f.t.Fatal(err)
	}
	return log
}

// A restore without a backup that a crash cut off after its head's commit
// but before its renames were durable: the workspace still holds the
// journal's head, the head is the target. Completing it takes the
// journal's head as saved content, as the restore itself took the head
// it started from: every path is restored, none left as unsaved.
func TestCompletingARestoreWhoseHeadMovedRestoresEveryPath(t *testing.T) {
	t.Parallel()
	f := threeFilesChanged(t)
	log := f.list()
	one, two := log.Checkpoints[0].ID, log.Head
	j := &Journal{Task: DefaultTask, Target: one, Head: two, Started: time.Now().UTC()}
	if err := f.e.writeJournal(j, true); err != nil {
		t.Fatal(err)
	}
	if err := f.e.moveHead(DefaultTask, objects.ID(one)); err != nil {
		t.Fatal(err)
	}
	f.open(Options{})
	s, err := f.e.SettleRestore(context.Background())
	if err != nil || s == nil || s.Completed == nil || len(s.Completed.Conflicts) != 0 {
		t.Fatalf("settled %+v, %v; want the restore completed without conflicts", s, err)
	}
	if got := f.read(); got["top"].Content != "1" || got["d/x"].Content != "1" || got["d/y"].Content != "1" || got["d/e/z"].Kind != "" {
		t.Fatalf("workspace after the completion: %v", got)
	}
	if head := f.list().Head; head != one || f.e.PendingRestore() != nil {
		t.Fatalf("head %s, pending %+v after the completion", head.Short(), f.e.PendingRestore())
	}
}
