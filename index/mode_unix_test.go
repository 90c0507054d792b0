//go:build unix

package index

import "io/fs"

// privateDirMode reports whether a directory's mode keeps it private to
// its owner.
func privateDirMode(m fs.FileMode) bool { return m.IsDir() && m.Perm() == 0o700 }
