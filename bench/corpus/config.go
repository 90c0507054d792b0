// Package corpus generates deterministic, realistic monorepo workspaces for
// benchmarks: source-like text files with log-normal sizes, about 2% binary
// files, a few files over 20 MiB, deep and wide directories, a .gitignore with
// ignored build output, a node_modules tree, nested repositories, symlinks and
// executables. The same Config (seed included) always produces the same bytes,
// paths and modes, whatever the number of goroutines that write them.
package corpus

import (
	"fmt"
	"strings"
)

// Config sizes a corpus. Files counts every regular file written (captured,
// ignored and node_modules alike); the mix is fixed in proportion to it.
type Config struct {
	Files      int    // total regular files, approximately (±1%)
	LargeFiles int    // files of 20–28 MiB (half text, half binary)
	Seed       uint64 // the same seed gives the same corpus
}

// Scales are the named corpus sizes ForScale accepts, smallest first.
var Scales = []string{"tiny", "10k", "100k", "1m"}

// ForScale returns the Config of a named scale ("tiny", "10k", "100k",
// "1m"), with the given seed.
func ForScale(name string, seed uint64) (Config, error) {
	switch strings.ToLower(name) {
	case "tiny":
		return Config{Files: 400, LargeFiles: 0, Seed: seed}, nil
	case "10k":
		return Config{Files: 10_000, LargeFiles: 2, Seed: seed}, nil
	case "100k":
		return Config{Files: 100_000, LargeFiles: 4, Seed: seed}, nil
	case "1m":
		return Config{Files: 1_000_000, LargeFiles: 6, Seed: seed}, nil
	}
	return Config{}, fmt.Errorf("corpus: unknown scale %q (want one of %s)", name, strings.Join(Scales, ", "))
}

// Fractions of Config.Files taken by each kind of file. The remainder is
// captured source text.
const (
	fracNodeModules = 0.07
	fracBuild       = 0.03
	fracBinary      = 0.02
	fracExecutable  = 0.01
	fracSymlink     = 0.005
	filesPerDir     = 12
	maxDepth        = 18
	largeMinSize    = 20 << 20
	largeSpread     = 8 << 20
)

// IgnoredDirNames are the directory names a snapshot of a corpus never
// descends into: the repositories' .git and the ignored output trees.
var IgnoredDirNames = []string{".git", "node_modules", "build", "dist"}
