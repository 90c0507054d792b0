package corpus

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestCopyOfARealTree copies a small tree with a repository, ignore rules,
// a read-only file and a symlink: the source stays as it was, the copy has
// no .git and writable files, the manifest counts what the cline profile
// captures, and Mutate edits only captured source files, the same ones for
// the same seed.
func TestCopyOfARealTree(t *testing.T) {
	src := t.TempDir()
	files := map[string]string{
		".git/HEAD":          "ref: refs/heads/main\n",
		".gitignore":         "*.log\nout/\n",
		"main.go":            "package main\n\nfunc main() {}\n",
		"lib/util.go":        "package lib\n\n// Util is useful.\nfunc Util() {}\n",
		"lib/README.md":      "# lib\n\nSome words.\n",
		"lib/data.bin":       "\x00\x01\x02",
		"debug.log":          "ignored\n",
		"out/gen.go":         "package out\n",
		"sub/deep/x_test.go": "package deep\n",
	}
	for p, content := range files {
		full := filepath.Join(src, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(src, "lib/util.go"), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("lib/util.go", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	before := fingerprint(t, src)

	dst := filepath.Join(t.TempDir(), "ws")
	m, err := Copy(context.Background(), src, dst)
	if err != nil {
		t.Fatal(err)
	}
	if fingerprint(t, src) != before {
		t.Fatal("Copy changed its source")
	}
	if _, err := os.Stat(filepath.Join(dst, ".git")); !os.IsNotExist(err) {
		t.Fatalf("the copy has a .git: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(dst, "lib/util.go")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("copied read-only file: %v, %v; want mode 0644", fi, err)
	}
	if m.Source == "" || m.Files != 8 || m.Captured != 5 || m.Ignored != 3 || m.Symlinks != 1 {
		t.Fatalf("manifest %+v; want 8 files, 5 captured (cline leaves out data.bin), 3 ignored, 1 symlink", m)
	}
	wantText := []string{"lib/README.md", "lib/util.go", "main.go", "sub/deep/x_test.go"}
	if !slices.Equal(m.Text, wantText) {
		t.Fatalf("edit candidates %v, want %v", m.Text, wantText)
	}
	mu, err := Mutate(m, 7, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range mu.Modified {
		if !slices.Contains(wantText, p) {
			t.Fatalf("Mutate edited %s, not a captured source file", p)
		}
	}
	again, err := Copy(context.Background(), src, filepath.Join(t.TempDir(), "ws"))
	if err != nil {
		t.Fatal(err)
	}
	mu2, err := Mutate(again, 7, 2, 1)
	if err != nil || !slices.Equal(mu.Modified, mu2.Modified) || !slices.Equal(mu.Added, mu2.Added) {
		t.Fatalf("same seed, different edits: %v %v vs %v %v (%v)", mu.Modified, mu.Added, mu2.Modified, mu2.Added, err)
	}
}
