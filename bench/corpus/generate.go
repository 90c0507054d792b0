package corpus

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"

	"golang.org/x/sync/errgroup"
)

// Manifest describes a generated corpus. Paths are slash-separated and
// relative to Root; Text and Dirs are sorted.
type Manifest struct {
	Root        string
	Source      string   // the directory Copy copied; "" for a generated corpus
	Text        []string // captured source text files (the candidates for edits)
	Dirs        []string // captured directories (where new files may go)
	Files       int      // regular files written, captured or not
	Captured    int      // regular files a snapshot holds
	Bytes       int64    // bytes of the captured regular files
	Binary      int      // captured binary files, large ones included
	Large       int      // captured files of 20+ MiB
	Executables int
	Symlinks    int
	Ignored     int // files ignored by .gitignore (build output, *.o)
	NodeModules int // files below node_modules/
	NestedRepos int // directories with their own .git
}

// Generate writes the corpus of cfg under root (created if missing; it
// should be empty) and returns its manifest. Files are written in parallel;
// the result does not depend on scheduling. Cancelling ctx stops the writes
// and returns its error.
func Generate(ctx context.Context, root string, cfg Config) (*Manifest, error) {
	if cfg.Files < 100 {
		return nil, fmt.Errorf("corpus: %d files is too few for the promised mix (want 100+)", cfg.Files)
	}
	items := plan(cfg)
	m := &Manifest{Root: root}
	dirs := map[string]bool{}
	for _, it := range items {
		m.count(it)
		dirs[path.Dir(it.path)] = true
	}
	dirList := make([]string, 0, len(dirs))
	for d := range dirs {
		dirList = append(dirList, d)
	}
	slices.Sort(dirList)
	for _, d := range dirList {
		if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(d)), 0o755); err != nil {
			return nil, fmt.Errorf("corpus: %w", err)
		}
	}
	m.Dirs = capturedDirs(dirList)
	slices.Sort(m.Text)

	g, gctx := errgroup.WithContext(ctx)
	workers := 2 * runtime.GOMAXPROCS(0)
	for w := range workers {
		g.Go(func() error {
			var buf []byte
			for i := w; i < len(items); i += workers {
				if err := gctx.Err(); err != nil {
					return err
				}
				var err error
				if buf, err = writeItem(root, cfg.Seed, i, items[i], buf[:0]); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return m, nil
}

// count adds one item to the manifest's tallies.
func (m *Manifest) count(it item) {
	switch it.kind {
	case kindSymlink:
		m.Symlinks++
		return
	case kindIgnored:
		m.Ignored++
	case kindNodeModule:
		m.NodeModules++
	case kindVerbatim:
		if path.Base(path.Dir(it.path)) == ".git" {
			if path.Base(it.path) == "HEAD" {
				m.NestedRepos++
			}
			m.Files++
			return
		}
	}
	m.Files++
	if it.kind == kindIgnored || it.kind == kindNodeModule {
		return
	}
	m.Captured++
	m.Bytes += int64(len(it.data))
	if it.kind != kindVerbatim {
		m.Bytes += int64(it.size)
	}
	switch it.kind {
	case kindText:
		m.Text = append(m.Text, it.path)
	case kindBinary:
		m.Binary++
	case kindScript:
		m.Executables++
	case kindLargeText:
		m.Large++
	case kindLargeBinary:
		m.Large++
		m.Binary++
	}
}

// capturedDirs keeps the directories a snapshot descends into.
func capturedDirs(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		if d == "." || ignoredDir(d) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// ignoredDir reports whether a slash path lies in an IgnoredDirNames directory.
func ignoredDir(p string) bool {
	for p != "." && p != "/" && p != "" {
		if slices.Contains(IgnoredDirNames, path.Base(p)) {
			return true
		}
		p = path.Dir(p)
	}
	return false
}

// writeItem writes item i, using buf as scratch space, and returns buf.
func writeItem(root string, seed uint64, i int, it item, buf []byte) ([]byte, error) {
	name := filepath.Join(root, filepath.FromSlash(it.path))
	rng := rand.New(rand.NewPCG(seed, uint64(i)+1))
	mode := os.FileMode(0o644)
	switch it.kind {
	case kindSymlink:
		if err := os.Symlink(it.data, name); err != nil {
			return buf, fmt.Errorf("corpus: %w", err)
		}
		return buf, nil
	case kindVerbatim:
		buf = append(buf, it.data...)
	case kindBinary, kindLargeBinary:
		buf = writeBinary(buf, rng, it.size)
	case kindScript:
		mode = 0o755
		buf = append(buf, "#!/bin/sh\nset -eu\n"...)
		buf = writeText(buf, rng, max(it.size-len(buf), 0))
	default:
		buf = writeText(buf, rng, it.size)
	}
	if err := os.WriteFile(name, buf, mode); err != nil {
		return buf, fmt.Errorf("corpus: %w", err)
	}
	// WriteFile applies the umask; executables must keep their x bits.
	if mode != 0o644 {
		if err := os.Chmod(name, mode); err != nil {
			return buf, fmt.Errorf("corpus: %w", err)
		}
	}
	return buf, nil
}
