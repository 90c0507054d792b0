//go:build unix

package restore

import (
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"
)

// sameInode reports whether two lookups name one inode, where both say
// which (unknown: true).
func sameInode(a, b fs.FileInfo) bool {
	ad, ai, ok1 := inodeOf(a)
	bd, bi, ok2 := inodeOf(b)
	return !ok1 || !ok2 || ad == bd && ai == bi
}

func inodeOf(fi fs.FileInfo) (dev, ino uint64, ok bool) {
	switch st := fi.Sys().(type) {
	case *unix.Stat_t:
		return uint64(st.Dev), uint64(st.Ino), true
	case *syscall.Stat_t:
		return uint64(st.Dev), uint64(st.Ino), true
	}
	return 0, 0, false
}

// inodeNumber returns the inode a lookup found, where it says.
func inodeNumber(fi fs.FileInfo) (uint64, bool) {
	_, ino, ok := inodeOf(fi)
	return ino, ok
}
