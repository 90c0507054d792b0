package osfs

import (
	"os"

	"golang.org/x/sys/unix"
)

// HoldFlags are the flags that open a file only to keep it (an O_PATH
// descriptor of the file or symlink itself, needing no permission on it),
// and whether the platform has them. The kernel frees a file's blocks when
// its last link and its last descriptor are gone: a file held while it is
// replaced or removed is freed when it is let go, not in the rename or the
// unlink (which, for a small file on ext4, is most of the call's time).
func HoldFlags() (flags int, ok bool) {
	return os.O_RDONLY | unix.O_PATH | unix.O_NOFOLLOW, true
}
