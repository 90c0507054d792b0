package restore

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/ckpt/ckpt/internal/osfs"
)

// FS is the file-system seam of restore in the workspace: every change a
// restore makes to the workspace goes through it, so tests can fail any one
// of them (the store's files, the journal among them, go through the
// store's seam, internal/storefs). Names are slash-separated
// and relative to the directory the seam is rooted at; the real seam
// (rootFS) resolves them through an os.Root and directories opened
// beneath it without following a symlink (dirroots.go), so nothing outside
// that directory can be reached, even through a symlink. Implementations are safe
// for concurrent use.
type FS interface {
	// Create creates a new file, open for writing with mode 0600; it never
	// replaces an existing file. A restore creates each file under a
	// temporary name (".ckpt-tmp-*", an export ".ckpt-export-*":
	// tempName) and renames it into place,
	// or at its own name in a directory it made under a temporary name,
	// where nothing sees it before that directory's rename.
	Create(name string) (TempFile, error)
	// Rename atomically replaces newname with oldname.
	Rename(oldname, newname string) error
	// Remove removes a file, a symlink or an empty directory.
	Remove(name string) error
	// RemoveAll removes name and everything under it.
	RemoveAll(name string) error
	// Mkdir creates one directory.
	Mkdir(name string, perm fs.FileMode) error
	// Symlink creates name as a symlink to target.
	Symlink(target, name string) error
	// Chmod sets the mode of name (symlinks are followed only inside the root).
	Chmod(name string, mode fs.FileMode) error
	// SyncDir makes the entries of directory name (creations, renames,
	// removals) durable, and its own mode.
	SyncDir(name string) error
	// SyncFile makes file name durable, its metadata (its mode among
	// them) with its data, without following a final symlink. On Windows
	// a read-only file, which refuses the handle open for writing that a
	// flush needs, is flushed through its directory instead.
	SyncFile(name string) error
	// SyncAll makes everything written to the file system holding the root
	// since the seam was opened durable; it fails with
	// osfs.ErrNoFilesystemSync where the platform cannot.
	SyncAll() error
	// SyncAllState reports whether SyncAll makes every file as durable as
	// its own sync would (sound: see osfs.FilesystemSync.Sound), and
	// whether it would now flush little besides what a restore is about to
	// write (cheap: the system holds at most cheapSyncAllDirty bytes written
	// and not yet on disk). A restore syncs each file where SyncAll is not
	// sound, and a small one where it is not cheap.
	SyncAllState() (sound, cheap bool)
	// Lstat describes name without following a final symlink; it changes nothing.
	Lstat(name string) (fs.FileInfo, error)
	// DirNames lists the names directory name holds, in no particular
	// order; it changes nothing (a preview reads there whether a
	// directory to remove would be empty).
	DirNames(name string) ([]string, error)
	// Hold keeps name (a file or symlink about to be replaced or removed)
	// open until the returned Closer is closed, so that the kernel frees
	// it then instead of in the rename or removal (osfs.HoldFlags). It
	// returns nil where there is no such name or the platform cannot hold
	// one; it changes nothing.
	Hold(name string) io.Closer
}

// TempFile is a file opened by Create. Sync makes its data durable;
// Name is its path relative to the seam's root.
type TempFile interface {
	Write(p []byte) (int, error)
	Chmod(mode fs.FileMode) error
	Sync() error
	Close() error
	Name() string
}

// TempPrefix starts the name of every temporary file a restore creates
// (followed by a pid, "-" and a number); a completed restore leaves none,
// and the completion of an interrupted one removes those it left, as
// does the discarding of its journal (Sweep).
const TempPrefix = ".ckpt-tmp-"

// tempSeq makes temporary names unique within this process.
var tempSeq atomic.Uint64

// tempStem starts the name of every temporary file a restore of this
// process creates.
var tempStem = fmt.Sprintf("%s%d-", TempPrefix, os.Getpid())

// exportTempPrefix starts the name of every temporary file an export
// (Applier.Export) creates, as TempPrefix does a restore's: another
// prefix, which no sweep (Sweep, NewPlan's) removes, so that an export
// into a directory inside the workspace never loses one to the sweep of
// a restore's journal, in this process or another.
const exportTempPrefix = ".ckpt-export-"

// exportStem starts the name of every temporary file an export of this
// process creates.
var exportStem = fmt.Sprintf("%s%d-", exportTempPrefix, os.Getpid())

// tempName is a hidden sibling of rel for an atomic replace, whose name
// starts with stem (tempStem or exportStem).
func tempName(rel, stem string) string {
	return path.Join(path.Dir(rel), fmt.Sprintf("%s%d", stem, tempSeq.Add(1)))
}

// isTempName reports whether name (one element of a path) is one tempName
// gives, in this process or another: TempPrefix, a pid, "-", a number.
func isTempName(name string) bool {
	rest, ok := strings.CutPrefix(name, TempPrefix)
	if !ok {
		return false
	}
	pid, seq, ok := strings.Cut(rest, "-")
	return ok && allDigits(pid) && allDigits(seq)
}

// allDigits reports whether s is a non-empty run of ASCII digits.
func allDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// ownTemp reports whether name is one tempName of this process gives.
func ownTemp(name string) bool { return strings.HasPrefix(name, tempStem) }

// rootFS is the real FS, over an os.Root. Names are resolved from the
// open directory that holds them (dirroots.go). Syncs go through osfs by
// the root's path: they change nothing, so the root's confinement is not
// needed for them.
type rootFS struct {
	root *os.Root
	dirs *dirRoots
	dir  string
	sync *osfs.FilesystemSync // nil where the platform has no syncfs
}

// OpenRoot opens dir as a FS; wrap, when set (a test's fault
// injector), wraps the real seam. The returned close releases the root
// and the directories opened below it.
func OpenRoot(dir string, wrap func(FS) FS) (FS, func() error, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	sync, err := openSync(root, dir)
	if err != nil {
		root.Close()
		return nil, nil, err
	}
	dirs, err := newDirRoots(root)
	if err != nil {
		if sync != nil {
			sync.Close()
		}
		root.Close()
		return nil, nil, err
	}
	r := rootFS{root, dirs, dir, sync}
	var fsys FS = r
	if wrap != nil {
		fsys = wrap(fsys)
	}
	return fsys, func() error {
		r.dirs.close()
		if sync != nil {
			sync.Close()
		}
		return root.Close()
	}, nil
}

func (r rootFS) Create(name string) (TempFile, error) {
	var f newFile
	err := r.dirs.in(name, func(d *dirRoot, base string) (err error) {
		f, err = d.handle.createExcl(base, 0o600)
		return err
	})
	if err != nil {
		return nil, err
	}
	return rootFile{f, name}, nil
}

func (r rootFS) Hold(name string) io.Closer {
	flags, ok := osfs.HoldFlags()
	if !ok {
		return nil
	}
	var held io.Closer
	if err := r.dirs.in(name, func(d *dirRoot, base string) (err error) {
		held, err = d.handle.hold(base, flags)
		return err
	}); err != nil {
		return nil
	}
	return held
}

// Rename renames within one directory through its open descriptor;
// across directories it resolves both names from the workspace root.
func (r rootFS) Rename(oldname, newname string) error {
	r.dirs.forget(oldname)
	r.dirs.forget(newname)
	if path.Dir(oldname) != path.Dir(newname) {
		return r.root.Rename(oldname, newname)
	}
	return r.dirs.in(newname, func(d *dirRoot, base string) error { return d.handle.rename(path.Base(oldname), base) })
}

func (r rootFS) Remove(name string) error {
	r.dirs.forget(name)
	return r.dirs.in(name, func(d *dirRoot, base string) error { return d.handle.remove(base) })
}

func (r rootFS) RemoveAll(name string) error {
	r.dirs.forget(name)
	return r.root.RemoveAll(name)
}

func (r rootFS) Mkdir(name string, perm fs.FileMode) error {
	return r.dirs.in(name, func(d *dirRoot, base string) error { return d.handle.mkdir(base, perm) })
}

func (r rootFS) Symlink(target, name string) error {
	return r.dirs.in(name, func(d *dirRoot, base string) error { return d.handle.symlink(target, base) })
}

// Chmod follows a final symlink that stays inside the workspace. It
// changes name through its open directory when name is not a symlink
// (a call or two, where a walk from the workspace root costs two per path
// component: the modes of a clone's 7,000 directories took most of the
// calls after its files); where that fails (a symlink, a kernel without
// fchmodat2), it resolves name again from the workspace root, whose answer
// it returns.
func (r rootFS) Chmod(name string, mode fs.FileMode) error {
	if r.dirs.in(name, func(d *dirRoot, base string) error { return d.handle.chmod(base, mode) }) == nil {
		return nil
	}
	return r.root.Chmod(name, mode)
}

func (r rootFS) Lstat(name string) (fi fs.FileInfo, err error) {
	err = r.dirs.in(name, func(d *dirRoot, base string) error {
		fi, err = d.handle.lstat(base)
		return err
	})
	return fi, err
}

func (r rootFS) DirNames(name string) ([]string, error) {
	d, err := r.root.Open(name)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}

func (r rootFS) SyncFile(name string) error {
	return r.dirs.in(name, func(d *dirRoot, base string) error { return d.handle.syncFile(base) })
}

func (r rootFS) SyncDir(name string) error {
	return osfs.SyncDir(filepath.Join(r.dir, filepath.FromSlash(name)))
}

// openSync opens the root's file system for SyncAll, through the root
// itself, before the restore writes; nil where the platform has no syncfs.
func openSync(root *os.Root, dir string) (*osfs.FilesystemSync, error) {
	if !osfs.HasFilesystemSync() {
		return nil, nil
	}
	f, err := root.Open(".")
	if err != nil {
		return nil, err
	}
	sync, err := osfs.FilesystemSyncOf(f, dir)
	if err != nil {
		f.Close()
	}
	return sync, err
}

// SyncAll flushes the whole file system holding the root (one call instead
// of an fsync per restored file, for large restores and whenever cheap).
func (r rootFS) SyncAll() error {
	if r.sync == nil {
		return osfs.ErrNoFilesystemSync
	}
	return r.sync.Sync()
}

// cheapSyncAllDirty is the most data written and not yet on disk, anyone's
// and on any disk, with which a syncfs still costs a small restore less
// than its per-file syncs: those make each file's inode durable on its own
// and flush the device (or commit the journal) per batch of files in
// flight, about 10 ms for 120 files here, and 4 MiB take 8 ms to write out
// at 500 MB/s.
const cheapSyncAllDirty = 4 << 20

func (r rootFS) SyncAllState() (sound, cheap bool) {
	if r.sync == nil || !r.sync.Sound() {
		return false, false
	}
	n, ok := osfs.DirtyBytes()
	return true, ok && n <= cheapSyncAllDirty
}

// rootFile is a TempFile of rootFS: what createExcl opened, named by its
// path relative to the seam's root.
type rootFile struct {
	newFile
	rel string
}

func (f rootFile) Name() string { return f.rel }

// newFile is a file createExcl created: Sync is DataSync (the mode and
// size are metadata the rename's directory sync does not need).
type newFile interface {
	Write(p []byte) (int, error)
	Chmod(mode fs.FileMode) error
	Sync() error
	Close() error
}
