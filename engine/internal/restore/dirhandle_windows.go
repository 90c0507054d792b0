package restore

import (
	"io/fs"
	"os"

	"github.com/ckpt/ckpt/internal/osfs"
)

// dirHandle holds nothing on Windows: a restore creates and renames its
// files through the directory's os.Root.
type dirHandle struct{}

func openDirHandle(*os.Root) (dirHandle, error) { return dirHandle{}, nil }

func openSubHandle(*dirRoot, string) (dirHandle, error) { return dirHandle{}, nil }

func (dirHandle) close() {}

// openDirsBound is maxOpenDirs: a Windows process may hold far more
// handles than a restore keeps open.
func openDirsBound() int { return maxOpenDirs }

// createExcl creates base in dr for writing with permissions perm, never
// following or replacing an existing entry.
func (dr *dirRoot) createExcl(base string, perm fs.FileMode) (newFile, error) {
	f, err := dr.root.OpenFile(base, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

// rename renames oldname onto newname in dr.
func (dr *dirRoot) rename(oldname, newname string) error { return dr.root.Rename(oldname, newname) }

// osFile is a file createExcl created, synced with osfs.DataSync.
type osFile struct{ *os.File }

func (f osFile) Sync() error { return osfs.DataSync(f.File) }
