package osfs

import "os"

// OpenShared opens path for reading the way unix always does: while it is
// open, other processes and goroutines may still rename a file over path
// or delete it, and the reader keeps reading what it opened. On Windows it
// asks for that explicitly (FILE_SHARE_DELETE, which os.Open leaves out), so
// a long read never fails a writer with a sharing violation. A directory
// opens as os.Open opens it.
func OpenShared(path string) (*os.File, error) { return openShared(path) }
