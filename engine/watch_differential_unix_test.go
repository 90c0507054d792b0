//go:build linux || darwin

package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// defaultWatchRounds is TestWatchedSaveDifferential's length with the long
// tests (testbound.LongEnv): two bursts.
const defaultWatchRounds = 100

// replace replaces file f by a symlink, atomically.
func (c *churn) replace(f, dir string) error {
	link := filepath.Join(dir, fmt.Sprintf(".ln%d", c.n))
	if err := os.Symlink(c.label(), link); err != nil {
		return err
	}
	return os.Rename(link, f)
}

// flood makes far more events than the kernel queue holds, in the hope of
// a kernel overflow (the reader may keep up: the watch package's own test
// holds it off).
func (c *churn) flood() {
	pair := [2]string{filepath.Join(c.ws, "burst0"), filepath.Join(c.ws, "burst1")}
	for _, p := range pair {
		os.WriteFile(p, nil, 0o644)
	}
	for i := range 40000 { // two names alternate so the kernel cannot merge the events
		os.Chmod(pair[i%2], os.FileMode(0o600|i/2%2*0o100))
	}
}

// dirRemovalUnseen says why the watcher cannot be shown removed
// directories here; "" when it can.
func dirRemovalUnseen() string { return "" }

// unsaveable makes in dir a named pipe or a file over diffMaxFileSize.
func (c *churn) unsaveable(dir string) error {
	if c.rng.IntN(2) == 0 {
		c.n++
		return syscall.Mkfifo(filepath.Join(dir, pipeName(c.n)), 0o644)
	}
	return c.oversized(dir)
}
