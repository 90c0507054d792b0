package corpus

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fingerprint hashes every path, kind, mode, size and content under root.
func fingerprint(t *testing.T, root string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fmt.Fprintf(h, "%s %v ", rel, info.Mode())
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			fmt.Fprintln(h, target)
		case info.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%d %x\n", len(data), sha256.Sum256(data))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

func generate(t *testing.T, cfg Config) *Manifest {
	t.Helper()
	m, err := Generate(context.Background(), t.TempDir(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestGenerateIsDeterministic(t *testing.T) {
	cfg, err := ForScale("tiny", 7)
	if err != nil {
		t.Fatal(err)
	}
	a, b := generate(t, cfg), generate(t, cfg)
	if fa, fb := fingerprint(t, a.Root), fingerprint(t, b.Root); fa != fb {
		t.Fatalf("same seed, different corpora: %s vs %s", fa, fb)
	}
	cfg.Seed = 8
	if c := generate(t, cfg); fingerprint(t, c.Root) == fingerprint(t, a.Root) {
		t.Fatal("different seeds produced the same corpus")
	}

	ma, err := Mutate(a, 1, 10, 3)
	if err != nil {
		t.Fatal(err)
	}
	mb, err := Mutate(b, 1, 10, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(ma.Modified) != 10 || len(ma.Added) != 3 {
		t.Fatalf("mutation changed %d and added %d files, want 10 and 3", len(ma.Modified), len(ma.Added))
	}
	if fmt.Sprint(ma) != fmt.Sprint(mb) || fingerprint(t, a.Root) != fingerprint(t, b.Root) {
		t.Fatal("the same mutation of the same corpus diverged")
	}
}

func TestGenerateMix(t *testing.T) {
	cfg := Config{Files: 2000, LargeFiles: 0, Seed: 3}
	m := generate(t, cfg)
	if m.Files < cfg.Files*99/100 || m.Files > cfg.Files*101/100 {
		t.Errorf("wrote %d files, want %d ±1%%", m.Files, cfg.Files)
	}
	checks := []struct {
		name     string
		got, min int
	}{
		{"binary", m.Binary, cfg.Files / 100},
		{"executables", m.Executables, cfg.Files / 200},
		{"symlinks", m.Symlinks, cfg.Files / 400},
		{"ignored", m.Ignored, cfg.Files / 50},
		{"node_modules", m.NodeModules, cfg.Files / 20},
		{"nested repos", m.NestedRepos, 1},
	}
	for _, c := range checks {
		if c.got < c.min {
			t.Errorf("%s: %d, want at least %d", c.name, c.got, c.min)
		}
	}
	if m.Binary > cfg.Files*3/100 {
		t.Errorf("binary: %d files, want about 2%% of %d", m.Binary, cfg.Files)
	}
	mean := m.Bytes / int64(m.Captured)
	if mean < 2<<10 || mean > 16<<10 {
		t.Errorf("mean captured size %d bytes, want a few KiB", mean)
	}
	for _, p := range []string{".gitignore", "third_party/lib0/.git/HEAD", "node_modules"} {
		if _, err := os.Lstat(filepath.Join(m.Root, p)); err != nil {
			t.Error(err)
		}
	}
	depth := 0
	for _, d := range m.Dirs {
		depth = max(depth, strings.Count(d, "/")+1)
	}
	if depth < 10 {
		t.Errorf("deepest captured directory has %d levels, want 10+", depth)
	}
	execs := 0
	err := filepath.WalkDir(filepath.Join(m.Root, "tools"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err == nil && info.Mode().Perm()&0o111 == 0o111 {
			execs++
		}
		return err
	})
	if err != nil || execs != m.Executables {
		t.Errorf("%d executable scripts on disk, manifest says %d (%v)", execs, m.Executables, err)
	}
}

func TestLargeFiles(t *testing.T) {
	m := generate(t, Config{Files: 200, LargeFiles: 1, Seed: 1})
	info, err := os.Stat(filepath.Join(m.Root, "assets/datasets/dump-0.json"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() < largeMinSize {
		t.Fatalf("large file has %d bytes, want 20+ MiB", info.Size())
	}
}

func TestRelPath(t *testing.T) {
	cases := []struct{ dir, target, want string }{
		{"a/b", "a/b/f", "f"},
		{"a/b", "a/c/f", "../c/f"},
		{"a", "x/y/f", "../x/y/f"},
	}
	for _, c := range cases {
		if got := relPath(c.dir, c.target); got != c.want {
			t.Errorf("relPath(%q, %q) = %q, want %q", c.dir, c.target, got, c.want)
		}
	}
}
