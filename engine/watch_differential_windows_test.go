package engine

import (
	"fmt"
	"os"
	"path/filepath"
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
