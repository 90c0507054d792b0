package osfs

// CheckWritable reports, without writing, why name cannot be written by
// this process: an existing file it may not write, or a directory in which
// it may not create a file (permissions, a read-only file system). nil
// means a write may go ahead (it can still fail: a full disk). On Windows
// only a file's read-only attribute is seen.
func CheckWritable(name string) error { return checkWritable(name) }
