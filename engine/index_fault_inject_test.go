package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/ckpt/ckpt/engine/remote"
	"github.com/ckpt/ckpt/internal/faultfs"
	"github.com/ckpt/ckpt/internal/storefs"
	"github.com/ckpt/ckpt/internal/testbound"
	"github.com/ckpt/ckpt/internal/testtree"
)

const (
	errnoENOSPC = syscall.ENOSPC
	errnoEIO    = syscall.EIO
	errnoEACCES = syscall.EACCES
)

// indexOp picks the operations the suite fails: every create, write,
// sync, rename and link of a file in the store's index directory, and
// the syncs of that directory and of the store directory holding it.
func indexOp(op faultfs.Op) bool {
	switch op.Kind {
	case faultfs.OpCreate, faultfs.OpReuseForWrite, faultfs.OpLink, faultfs.OpRename,
		faultfs.OpFileWrite, faultfs.OpFileSync:
		dir := string(filepath.Separator) + "index"
		store := op.Kind == faultfs.OpFileSync && filepath.Base(op.Path) == "store" // the index's parent
		return store || strings.Contains(op.Path, dir+string(filepath.Separator)) || strings.HasSuffix(op.Path, dir)
	}
	return false
}

// injector fails chosen operations of the index's file system: the n-th
// of indexOp's (faultfs.Nth), and, once failTables is called, every table
// creation.
type injector struct {
	*faultfs.Nth
	mu     sync.Mutex
	tables syscall.Errno
}

func newInjector() *injector { return &injector{Nth: &faultfs.Nth{FailAt: -1, Counts: indexOp}} }

func (h *injector) fs() vfs.FS { return faultfs.Wrap(storefs.OS, h) }

// failTables makes every later index table creation fail with errno.
func (h *injector) failTables(errno syscall.Errno) {
	h.mu.Lock()
	h.tables = errno
	h.mu.Unlock()
}

// MaybeError implements faultfs.Injector.
func (h *injector) MaybeError(op faultfs.Op) error {
	h.mu.Lock()
	tables := h.tables
	h.mu.Unlock()
	if tables != 0 && op.Kind == faultfs.OpCreate && strings.HasSuffix(op.Path, ".sst") {
		return &fs.PathError{Op: "create", Path: op.Path, Err: tables}
	}
	return h.Nth.MaybeError(op)
}

// TearsWrites keeps the index's failed writes whole, as pebble's errorfs
// does.
func (h *injector) TearsWrites() bool { return false }

// faultScenario is a store with checkpoints on two tasks, kept as a
// template that each injection run copies.
type faultScenario struct {
	ws, wsTemplate, store string
	records               []record
	// remote is a file:// remote's directory holding task "far", none of
	// whose blobs the store holds.
	remote string
}

func newFaultScenario(t *testing.T) *faultScenario {
	t.Helper()
	f := newFixture(t, testtree.Dir{})
	files := map[string]string{}
	var recs []record
	save := func(task string, change map[string]string) {
		maps.Copy(files, change)
		for rel, c := range change {
			f.write(rel, c)
		}
		res, err := f.e.Save(context.Background(), SaveOptions{Task: task})
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, record{id: res.ID, task: task, seq: res.Seq, files: maps.Clone(files)})
	}
	save(DefaultTask, map[string]string{"a": "one", "dir/b": "bee"})
	save(DefaultTask, map[string]string{"a": "two", "dir/c": strings.Repeat("c", 5000)})
	save("other", map[string]string{"o": "other task"})
	save(DefaultTask, map[string]string{"dir/b": "bee 3"})
	f.e.Close()
	f.e = nil
	wsTemplate := t.TempDir()
	copyDir(t, f.ws, wsTemplate)
	return &faultScenario{ws: f.ws, wsTemplate: wsTemplate, store: f.store, records: recs, remote: farRemote(t)}
}

// farRemote pushes task "far" of a store of its own, four files of
// 100 KiB (a record each), to a new file:// remote, and returns its
// directory.
func farRemote(t *testing.T) string {
	t.Helper()
	tree := testtree.Dir{}
	for i := range 4 {
		b := make([]byte, 100<<10)
		mrand.NewChaCha8([32]byte{byte(i), 'f'}).Read(b)
		tree[fmt.Sprintf("far%d.bin", i)] = testtree.File{Content: string(b)}
	}
	g := newFixture(t, tree)
	if _, err := g.e.Save(context.Background(), SaveOptions{Task: "far"}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	b, err := remote.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := g.e.AddRemote(context.Background(), "far", remote.FileURL(dir)); err != nil {
		t.Fatal(err)
	}
	if _, err := g.e.Push(context.Background(), b, PushOptions{Remote: "far", Task: "far"}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// faultOp is one engine operation driven under injection; mustKeep
// reports the checkpoints it may not remove.
type faultOp struct {
	name     string
	run      func(ctx context.Context, e *Engine, s *faultScenario) error
	mustKeep func(r record) bool
}

var faultOps = []faultOp{
	{"save", func(ctx context.Context, e *Engine, s *faultScenario) error {
		if err := os.WriteFile(filepath.Join(s.ws, "new"), []byte("new file"), 0o644); err != nil {
			return err
		}
		_, err := e.Save(ctx, SaveOptions{Message: "under faults"})
		return err
	}, func(record) bool { return true }},
	{"presave", func(ctx context.Context, e *Engine, s *faultScenario) error {
		if err := os.WriteFile(filepath.Join(s.ws, "new"), []byte("new file"), 0o644); err != nil {
			return err
		}
		if err := presaveNowForTest(e); err != nil {
			return err
		}
		_, err := e.Save(ctx, SaveOptions{Message: "after a presave"})
		return err
	}, func(record) bool { return true }},
	{"restore", func(ctx context.Context, e *Engine, _ *faultScenario) error {
		_, err := e.Restore(ctx, "@1", RestoreOptions{})
		return err
	}, func(record) bool { return true }},
	{"gc", func(ctx context.Context, e *Engine, _ *faultScenario) error {
		_, err := e.GC(ctx, GCOptions{Policy: &RetentionPolicy{KeepLast: 2}, RewriteBelow: 1})
		return err
	}, func(r record) bool { return r.task != DefaultTask || r.seq > 1 }},
	{"drop", func(ctx context.Context, e *Engine, _ *faultScenario) error {
		_, err := e.Drop(ctx, "other")
		return err
	}, func(r record) bool { return r.task != "other" }},
	// A pull, then a restore of what it pulled: the fetch commits what
	// it stored after every record (fetchKeepEvery), and when it fails.
	{"pull and fetch", func(ctx context.Context, e *Engine, s *faultScenario) error {
		b, err := remote.OpenDir(s.remote)
		if err != nil {
			return err
		}
		defer b.Close()
		if err := e.AddRemote(ctx, "far", remote.FileURL(s.remote)); err != nil {
			return err
		}
		pr, err := e.Pull(ctx, b, PullOptions{Remote: "far", Task: "far"})
		if err != nil {
			return err
		}
		r, err := e.Restore(ctx, pr.Head.String(), RestoreOptions{Task: "far"})
		if err == nil && r.Fetched.Blobs != 4 {
			err = fmt.Errorf("the restore fetched %+v, want the 4 files' blobs", r.Fetched)
		}
		return err
	}, func(record) bool { return true }},
}

// runFaulted resets the workspace, copies the store, runs op with h
// injecting (Open and Close included), and returns the copy and op's
// error.
func (s *faultScenario) runFaulted(t *testing.T, op faultOp, h *injector) (store string, err error) {
	t.Helper()
	ws, store := s.ws, filepath.Join(t.TempDir(), "store")
	if err := os.RemoveAll(ws); err != nil {
		t.Fatal(err)
	}
	copyDir(t, s.wsTemplate, ws)
	copyDir(t, s.store, store)
	testbound.Within(t, testbound.Hang, func() {
		var e *Engine
		e, err = Open(context.Background(), ws, Options{StoreDir: store, OpenRemote: openByURL, hooks: testHooks{storeFS: h.fs(), fetchKeepEvery: 1}})
		if err != nil {
			return
		}
		err = op.run(context.Background(), e, s)
		err = errors.Join(err, e.Close())
	})
	return store, err
}

// checkStore verifies a copy of the store without faults and reads back
// every checkpoint op must keep. It works on a copy because an index
// whose open was abandoned keeps pebble's lock until the process exits.
func (s *faultScenario) checkStore(t *testing.T, op faultOp, store string) {
	t.Helper()
	cp := filepath.Join(t.TempDir(), "store")
	copyLiveStore(t, store, cp)
	e, err := Open(context.Background(), s.ws, Options{StoreDir: cp})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer e.Close()
	mustVerify(t, e)
	var keep []record
	for _, r := range s.records {
		if op.mustKeep(r) {
			keep = append(keep, r)
		}
	}
	checkContents(t, e, keep)
}

// indexFaultSample is how many of an operation's injection points
// TestIndexWriteFaultsFailCleanly fails without the long tests: each run
// copies, opens and verifies a whole store, about a second under -race.
const indexFaultSample = 6

// TestIndexWriteFaultsFailCleanly fails, in turn, the creates, writes,
// syncs, renames and links the index makes during save, restore, gc,
// drop, and a pull with the fetch of a restore (Open and Close included): with the long tests every one of them
// with each of ENOSPC, EIO and EACCES, otherwise an even sample of them
// (testbound.Spread) with the errnos in rotation. Each run must return
// the injected error (or succeed, when pebble could do without the
// operation) within bounded time, and leave a store that verifies with
// every earlier checkpoint readable.
func TestIndexWriteFaultsFailCleanly(t *testing.T) {
	needAbandonedIndexFilesFreed(t)
	t.Parallel()
	s := newFaultScenario(t)
	errnos := []syscall.Errno{errnoENOSPC, errnoEIO, errnoEACCES}
	total := 0
	for _, op := range faultOps {
		t.Run(op.name, func(t *testing.T) {
			count := newInjector()
			if _, err := s.runFaulted(t, op, count); err != nil {
				t.Fatalf("%s without faults: %v", op.name, err)
			}
			n := count.Seen()
			for j, k := range testbound.Spread(n, indexFaultSample) {
				tried := errnos[j%len(errnos):][:1]
				if testbound.LongTests() {
					tried = errnos
				}
				for _, errno := range tried {
					h := newInjector()
					h.FailAt, h.Errno = k, errno
					store, err := s.runFaulted(t, op, h)
					if h.Hit() == "" {
						t.Fatalf("op %d of %d never happened (the run is not deterministic)", k, n)
					}
					if err != nil && !errors.Is(err, h.Errno) {
						t.Fatalf("%s failing %s: %v, want %v", op.name, h.Hit(), err, h.Errno)
					}
					s.checkStore(t, op, store)
				}
			}
			total += n
			t.Logf("%s: %d injection points, %d of them failed", op.name, n, len(testbound.Spread(n, indexFaultSample)))
		})
	}
	t.Logf("%d injection points in all", total)
}

// copyLiveStore copies a store an abandoned index may still be deleting
// obsolete files from: a file that vanishes during the copy was obsolete.
// pebble's lock file is left out.
func copyLiveStore(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil || d.Name() == "LOCK" {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o700)
		}
		b, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}
