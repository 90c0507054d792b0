package engine

import (
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/ckpt/ckpt/engine/internal/restore"
	"github.com/ckpt/ckpt/internal/faultfs"
	"github.com/ckpt/ckpt/internal/osfs"
	"github.com/ckpt/ckpt/internal/storefs"
)

// faultPlan numbers, from 0, the changes a restore makes to the workspace
// (through the restore seam, names relative to the workspace) and to its
// journal (through the store's seam, absolute names), and fails the one
// faultfs.Nth picks. Lstat, which changes nothing, is never counted.
type faultPlan struct {
	*faultfs.Nth
	// syncAllCheap is whether the restore seam answers that a SyncAll is
	// cheap where it is sound (FS.SyncAllState): the machine's own answer
	// would make the tests' path depend on its load.
	syncAllCheap bool
}

// newFaultPlan fails change failAt (none when < 0) with errno; fails,
// when set, decides instead. Its restores sync each file (see syncAllCheap).
func newFaultPlan(failAt int, errno syscall.Errno, fails func(n int, op faultfs.Op) bool) faultPlan {
	return faultPlan{Nth: &faultfs.Nth{FailAt: failAt, Errno: errno, Fails: fails}}
}

// fullFrom is a faultPlan's fails for a disk that fills at change at:
// that change fails, and so does every later one that takes space (a
// full disk stays full, while a restore that let go of the files it
// removed tries its write again).
func fullFrom(at int) func(n int, op faultfs.Op) bool {
	return func(n int, op faultfs.Op) bool {
		switch op.Kind {
		case faultfs.OpCreate, faultfs.OpFileWrite, faultfs.OpMkdirAll, faultfs.OpSymlink:
			return n >= at
		}
		return n == at
	}
}

// options are the Options of an Engine on store whose restores run
// under p: the store's operations on the journal (a failed write torn),
// and the syncs of the directory holding it once the journal was touched,
// go to p too; the rest (the index's sync of that directory at open among
// them) pass.
func (p faultPlan) options(store string) Options {
	var touched atomic.Bool
	journal := func(op faultfs.Op) error {
		base := filepath.Base(op.Path)
		if strings.HasPrefix(base, journalName) {
			touched.Store(true)
			return p.MaybeError(op)
		}
		if touched.Load() && op.Kind == faultfs.OpFileSync && base == filepath.Base(store) {
			return p.MaybeError(op)
		}
		return nil
	}
	return Options{hooks: testHooks{wrapRestoreFS: p.wrap, storeFS: faultfs.Wrap(storefs.OS, tearing(journal))}}
}

// tearing is an injector whose failed writes write half their bytes first,
// as faultfs.Nth's do: a journal's record cut short.
type tearing func(faultfs.Op) error

func (f tearing) MaybeError(op faultfs.Op) error { return f(op) }
func (tearing) TearsWrites() bool                { return true }

// wrap is the Options.wrapRestoreFS of a test using p.
func (p faultPlan) wrap(inner restore.FS) restore.FS {
	return &faultyFS{inner: inner, inj: p.Nth, syncAllCheap: p.syncAllCheap}
}

// faultyFS is a restore.FS whose changes are put to inj first, named as
// the store seam's (faultfs.Wrap) are.
type faultyFS struct {
	inner        restore.FS
	inj          faultfs.Injector
	syncAllCheap bool
}

func (f *faultyFS) Create(rel string) (restore.TempFile, error) {
	if err := f.inj.MaybeError(faultfs.Op{Kind: faultfs.OpCreate, Path: rel}); err != nil {
		return nil, err
	}
	t, err := f.inner.Create(rel)
	if err != nil {
		return nil, err
	}
	return &faultyFile{TempFile: t, inj: f.inj}, nil
}

func (f *faultyFS) Rename(oldname, newname string) error {
	return f.do(faultfs.OpRename, newname, func() error { return f.inner.Rename(oldname, newname) })
}
func (f *faultyFS) Remove(name string) error {
	return f.do(faultfs.OpRemove, name, func() error { return f.inner.Remove(name) })
}
func (f *faultyFS) RemoveAll(name string) error {
	return f.do(faultfs.OpRemoveAll, name, func() error { return f.inner.RemoveAll(name) })
}
func (f *faultyFS) Mkdir(name string, perm fs.FileMode) error {
	return f.do(faultfs.OpMkdirAll, name, func() error { return f.inner.Mkdir(name, perm) })
}
func (f *faultyFS) Symlink(target, name string) error {
	return f.do(faultfs.OpSymlink, name, func() error { return f.inner.Symlink(target, name) })
}
func (f *faultyFS) Chmod(name string, mode fs.FileMode) error {
	return f.do(faultfs.OpChmod, name, func() error { return f.inner.Chmod(name, mode) })
}
func (f *faultyFS) SyncDir(name string) error {
	return f.do(faultfs.OpFileSync, name, func() error { return f.inner.SyncDir(name) })
}
func (f *faultyFS) SyncFile(name string) error {
	return f.do(faultfs.OpFileSync, name, func() error { return f.inner.SyncFile(name) })
}
func (f *faultyFS) SyncAll() error {
	return f.do(faultfs.OpSyncFS, ".", f.inner.SyncAll)
}
func (f *faultyFS) SyncAllState() (sound, cheap bool) {
	sound, _ = f.inner.SyncAllState()
	return sound, sound && f.syncAllCheap
}
func (f *faultyFS) Lstat(name string) (fs.FileInfo, error) { return f.inner.Lstat(name) }
func (f *faultyFS) DirNames(name string) ([]string, error) { return f.inner.DirNames(name) }

// Hold is not a change: a restore that cannot hold a file replaces it all the same.
func (f *faultyFS) Hold(name string) io.Closer { return f.inner.Hold(name) }

func (f *faultyFS) do(kind faultfs.OpKind, name string, fn func() error) error {
	if err := f.inj.MaybeError(faultfs.Op{Kind: kind, Path: name}); err != nil {
		return err
	}
	return fn()
}

// faultyFile is a restore.TempFile whose writes, chmod and sync are put to inj first.
type faultyFile struct {
	restore.TempFile
	inj faultfs.Injector
}

func (f *faultyFile) Write(b []byte) (int, error) {
	if err := f.inj.MaybeError(faultfs.Op{Kind: faultfs.OpFileWrite, Path: f.Name()}); err != nil {
		return 0, err
	}
	return f.TempFile.Write(b)
}

func (f *faultyFile) Chmod(mode fs.FileMode) error {
	if err := f.inj.MaybeError(faultfs.Op{Kind: faultfs.OpFileChmod, Path: f.Name()}); err != nil {
		return err
	}
	return f.TempFile.Chmod(mode)
}

func (f *faultyFile) Sync() error {
	if err := f.inj.MaybeError(faultfs.Op{Kind: faultfs.OpFileSync, Path: f.Name()}); err != nil {
		return err
	}
	return f.TempFile.Sync()
}

// syncfsSound reports whether a restore into dir may end with a syncfs
// (osfs.FilesystemSync.Sound): not on every platform or file system.
func syncfsSound(t *testing.T, dir string) bool {
	t.Helper()
	s, err := osfs.OpenFilesystemSync(dir)
	if errors.Is(err, osfs.ErrNoFilesystemSync) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return s.Sound()
}
