package osfs

// IsDirNotEmpty reports whether err says a directory could not be removed
// because it still has entries (ENOTEMPTY, EEXIST on some unixes,
// ERROR_DIR_NOT_EMPTY on Windows).
func IsDirNotEmpty(err error) bool { return isDirNotEmpty(err) }

// IsSharingViolation reports whether err is Windows refusing an operation
// because another process has the file open (ERROR_SHARING_VIOLATION,
// ERROR_LOCK_VIOLATION, or ERROR_ACCESS_DENIED for a file pending deletion):
// a condition that may clear if retried shortly. Always false on unix, where
// an open file never blocks a rename or removal.
func IsSharingViolation(err error) bool { return isSharingViolation(err) }

// IsNotDir reports whether err says a path element that had to be a
// directory is not one (ENOTDIR; Windows reports such paths as not found).
func IsNotDir(err error) bool { return isNotDir(err) }

// IsSymlinkUnsupported reports whether err says symlinks cannot be created
// here: the file system has none (EOPNOTSUPP), or Windows withholds the
// privilege (ERROR_PRIVILEGE_NOT_HELD without developer mode).
func IsSymlinkUnsupported(err error) bool { return isSymlinkUnsupported(err) }
