package osfs

import (
	"io/fs"
	"os"
)

// checkWritable sees a file's read-only attribute, which os reports as a
// mode without write bits; a directory's attribute does not stop files
// being created in it.
func checkWritable(name string) error {
	fi, err := os.Stat(name)
	if err != nil || fi.IsDir() || fi.Mode().Perm()&0o200 != 0 {
		return nil
	}
	return &fs.PathError{Op: "write", Path: name, Err: fs.ErrPermission}
}
