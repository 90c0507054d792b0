package restore

import (
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/ckpt/ckpt/internal/osfs"
)

// dirHandle is a directory's own os.Root on Windows, through which a
// restore works in it.
type dirHandle struct{ root *os.Root }

// openDirHandle opens the directory r is rooted at (the workspace's) as a
// root of its own, which close closes.
func openDirHandle(r *os.Root) (dirHandle, error) {
	own, err := r.OpenRoot(".")
	if err != nil {
		return dirHandle{}, err
	}
	return dirHandle{own}, nil
}

// openSubHandle opens subdirectory base of parent; os.Root keeps it
// inside the workspace.
func openSubHandle(parent dirHandle, base string) (dirHandle, error) {
	r, err := parent.root.OpenRoot(base)
	if err != nil {
		return dirHandle{}, err
	}
	return dirHandle{r}, nil
}

func (h dirHandle) close() { h.root.Close() }

// closedHandle is what a closed dirRoot holds.
var closedHandle = dirHandle{}

// openDirsBound is maxOpenDirs: a Windows process may hold far more
// handles than a restore keeps open.
func openDirsBound() int { return maxOpenDirs }

// createExcl creates base in h for writing with permissions perm, never
// following or replacing an existing entry.
func (h dirHandle) createExcl(base string, perm fs.FileMode) (newFile, error) {
	f, err := h.root.OpenFile(base, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

// syncFile makes file base in h durable through a handle open for
// writing, the only kind FlushFileBuffers accepts. A read-only file
// refuses one (a restore that made it read-only changed its attribute
// only): h's own flush is then what this process can ask for.
func (h dirHandle) syncFile(base string) error {
	f, err := h.root.OpenFile(base, os.O_WRONLY, 0)
	if errors.Is(err, fs.ErrPermission) {
		return osfs.SyncDir(h.root.Name())
	}
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// rename renames oldname onto newname in h.
func (h dirHandle) rename(oldname, newname string) error { return h.root.Rename(oldname, newname) }

// remove removes base from h: a file, a symlink or an empty directory.
func (h dirHandle) remove(base string) error { return h.root.Remove(base) }

// mkdir makes directory base in h with permissions perm.
func (h dirHandle) mkdir(base string, perm fs.FileMode) error { return h.root.Mkdir(base, perm) }

// symlink makes base in h a symlink to target.
func (h dirHandle) symlink(target, base string) error { return h.root.Symlink(target, base) }

// chmod sets the mode of base in h, following a final symlink only inside
// h's directory.
func (h dirHandle) chmod(base string, mode fs.FileMode) error { return h.root.Chmod(base, mode) }

// lstat describes base in h without following a final symlink.
func (h dirHandle) lstat(base string) (fs.FileInfo, error) { return h.root.Lstat(base) }

// hold opens base in h with flags (osfs.HoldFlags; Windows holds nothing,
// so no restore calls it there).
func (h dirHandle) hold(base string, flags int) (io.Closer, error) {
	return h.root.OpenFile(base, flags, 0)
}

// osFile is a file createExcl created, synced with osfs.DataSync.
type osFile struct{ *os.File }

func (f osFile) Sync() error { return osfs.DataSync(f.File) }
