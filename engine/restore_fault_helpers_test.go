package engine

import (
	"io/fs"
	"sync"

	"github.com/ckpt/ckpt/engine/internal/restore"
)

// faultPlan decides which operation of the restore seam fails: the one
// numbered failAt (counting from 0, over every seam a test's Engine
// opens), with err. failAt < 0 fails none and only counts. Lstat, which
// changes nothing, is never counted or failed.
type faultPlan struct {
	mu     sync.Mutex
	failAt int
	err    error
	n      int    // operations seen
	failed string // the operation that failed, "" when none did
	// fails, when set, decides instead of failAt: operation op on name
	// (the n-th) fails when it returns true.
	fails func(n int, op, name string) bool
}

// wrap is the Options.wrapRestoreFS of a test using p.
func (p *faultPlan) wrap(inner restore.FS) restore.FS { return &faultyFS{inner: inner, plan: p} }

// hit counts one operation and returns the injected error if it is the one to fail.
func (p *faultPlan) hit(op, name string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.n
	p.n++
	fail := n == p.failAt
	if p.fails != nil {
		fail = p.fails(n, op, name)
	}
	if !fail {
		return nil
	}
	p.failed = op + " " + name
	return &fs.PathError{Op: op, Path: name, Err: p.err}
}

// count returns how many operations were seen and which failed.
func (p *faultPlan) count() (int, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n, p.failed
}

// faultyFS is a restore.FS whose changes can fail on plan.
type faultyFS struct {
	inner restore.FS
	plan  *faultPlan
}

func (f *faultyFS) CreateTemp(rel string) (restore.TempFile, error) {
	if err := f.plan.hit("create", rel); err != nil {
		return nil, err
	}
	t, err := f.inner.CreateTemp(rel)
	if err != nil {
		return nil, err
	}
	return &faultyFile{TempFile: t, plan: f.plan}, nil
}

func (f *faultyFS) Rename(oldname, newname string) error {
	return f.do("rename", newname, func() error { return f.inner.Rename(oldname, newname) })
}
func (f *faultyFS) Remove(name string) error {
	return f.do("remove", name, func() error { return f.inner.Remove(name) })
}
func (f *faultyFS) RemoveAll(name string) error {
	return f.do("removeall", name, func() error { return f.inner.RemoveAll(name) })
}
func (f *faultyFS) Mkdir(name string, perm fs.FileMode) error {
	return f.do("mkdir", name, func() error { return f.inner.Mkdir(name, perm) })
}
func (f *faultyFS) Symlink(target, name string) error {
	return f.do("symlink", name, func() error { return f.inner.Symlink(target, name) })
}
func (f *faultyFS) Chmod(name string, mode fs.FileMode) error {
	return f.do("chmod", name, func() error { return f.inner.Chmod(name, mode) })
}
func (f *faultyFS) SyncDir(name string) error {
	return f.do("syncdir", name, func() error { return f.inner.SyncDir(name) })
}
func (f *faultyFS) SyncAll() error {
	return f.do("syncfs", ".", f.inner.SyncAll)
}
func (f *faultyFS) Lstat(name string) (fs.FileInfo, error) { return f.inner.Lstat(name) }

func (f *faultyFS) do(op, name string, fn func() error) error {
	if err := f.plan.hit(op, name); err != nil {
		return err
	}
	return fn()
}

// faultyFile is a restore.TempFile whose writes, chmod and sync can fail on plan.
type faultyFile struct {
	restore.TempFile
	plan *faultPlan
}

func (f *faultyFile) Write(b []byte) (int, error) {
	if err := f.plan.hit("write", f.Name()); err != nil {
		return 0, err
	}
	return f.TempFile.Write(b)
}

func (f *faultyFile) Chmod(mode fs.FileMode) error {
	if err := f.plan.hit("fchmod", f.Name()); err != nil {
		return err
	}
	return f.TempFile.Chmod(mode)
}

func (f *faultyFile) Sync() error {
	if err := f.plan.hit("fsync", f.Name()); err != nil {
		return err
	}
	return f.TempFile.Sync()
}
