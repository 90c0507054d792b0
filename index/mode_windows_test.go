package index

import "io/fs"

// privateDirMode reports whether m is a directory's: Windows has no
// permission bits (os.Stat reports 0o777 for every directory; privacy
// comes from the ACL inherited from the user's profile), so there is
// nothing more to check.
func privateDirMode(m fs.FileMode) bool { return m.IsDir() }
