package osfs

import "errors"

// ErrNotRegular is returned by OpenRegular for a path that is not a
// regular file (any more): a directory, a FIFO, a device, a symlink.
var ErrNotRegular = errors.New("osfs: not a regular file")

// Stamp is what tells two looks at one open file apart: if neither the size
// nor the modification time moved (nor, where the look gives it, the
// status-change time), the content read in between is the content the file
// had. Where the look gives them it also says which file it is (Inode) and
// its permission bits (Perm), for a caller that records what it read. On
// Windows ChangeTime, Inode and Perm are 0: the handle query the open makes
// gives no change time, and its file index and attributes are not what the
// walker's listing takes its file ID and mode from.
type Stamp struct {
	Size       int64
	ModTime    int64 // nanoseconds since the Unix epoch
	ChangeTime int64 // nanoseconds since the Unix epoch; 0 on Windows
	Inode      uint64
	Perm       uint32 // st_mode & 07777; 0 on Windows
}

// Regular is a regular file opened for one pass over its content. Read
// returns io.EOF with the last short read (a regular file reads short only
// at its end) and remembers the file's own read error in Err, so a caller
// can tell a failing file from a failing consumer. Not safe for concurrent
// use.
type Regular struct{ regular }

// OpenRegular opens path for reading without following a symlink at path
// and without blocking (a FIFO that appeared there since the walk is
// refused, never opened for a blocking read). It fails with ErrNotRegular
// (wrapped in an *os.PathError) when path is not a regular file.
func OpenRegular(path string) (*Regular, error) {
	r, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	return &Regular{r}, nil
}

// Opened is the file's Stamp as the open found it, before any read: the
// look that Stamp after the reads is compared with, at no further call.
func (r *Regular) Opened() Stamp { return r.opened }
