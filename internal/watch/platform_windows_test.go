package watch

import (
	"errors"
	"io/fs"

	"golang.org/x/sys/windows"
)

// linkCount is 1: os.Lstat on Windows does not report the link count.
func linkCount(fs.FileInfo) uint64 { return 1 }

func isNotDir(err error) bool { return errors.Is(err, windows.ERROR_DIRECTORY) }

// barrierWrites is how many write-then-Changes pairs
// TestChangesIncludesWritesBeforeTheCall makes: fewer than on Unix, since
// under Wine each pair costs some ten wineserver round trips.
const barrierWrites = 300
