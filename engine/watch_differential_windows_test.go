package engine

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// defaultWatchRounds is TestWatchedSaveDifferential's length with the long
// tests (testbound.LongEnv): one burst,
// in rounds that cost under Wine what ten cost on Linux.
const defaultWatchRounds = 62

// replace replaces file f by another file, atomically (symlinks need a
// privilege on Windows, and Wine creates none).
func (c *churn) replace(f, dir string) error {
	tmp := filepath.Join(dir, fmt.Sprintf(".new%d", c.n))
	if err := os.WriteFile(tmp, c.bytes(c.rng.IntN(40)), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, f)
}

// flood adds nothing to the burst: every file operation costs
// milliseconds under Wine, so no flood overflows the read buffer here
// (the watch package's TestBufferOverflowReportsAll shows that path).
func (c *churn) flood() {}

// dirRemovalUnseen says why the watcher cannot be shown removed
// directories here; "" when it can. Under Wine (its ntdll exports
// wine_get_version) it cannot: Wine's server keeps its records of the
// directories a subtree watch covers by inode number and learns of a
// removal only when it reads inotify, in its own loop, so a directory
// made soon after a removal, at the inode number the file system has just
// freed, can go without change reports (internal/watch's doc). Windows
// has no such records; there directories are removed.
func dirRemovalUnseen() string {
	if windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() != nil {
		return ""
	}
	return "under Wine a directory made at a just-removed directory's inode number can go without change reports"
}

// unsaveable makes in dir a file over diffMaxFileSize (Windows has no
// named pipes in its file system).
func (c *churn) unsaveable(dir string) error { return c.oversized(dir) }
