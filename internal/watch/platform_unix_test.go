//go:build linux || darwin

package watch

import (
	"errors"
	"io/fs"
	"syscall"
)

func linkCount(fi fs.FileInfo) uint64 { return uint64(fi.Sys().(*syscall.Stat_t).Nlink) }

func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }

// barrierWrites is how many write-then-Changes pairs
// TestChangesIncludesWritesBeforeTheCall makes.
const barrierWrites = 2000
