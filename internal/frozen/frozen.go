// Package frozen is the recipe of the stores frozen under
// testdata/store-vN (N a store format version, index.FormatVersion then):
// a small store written once by each format, which the objects, index and
// engine tests open, as copies, and check against the recipe, so that every
// later version of ckpt keeps reading what this one wrote.
//
// The recipe is deterministic: the same steps saved at the same clock give
// the same blobs, trees and checkpoints, and the same packs byte for byte;
// the index differs only in the workspace path and creation time its Meta
// records (tests record their own workspace before opening a copy with the
// engine). Freeze a store of a new format version (a new directory, added
// to Versions, beside the older ones) with
//
//	go test ./engine -run TestFrozenStore -update-frozen
package frozen

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ckpt/ckpt/internal/testtree"
)

// Versions are the format versions frozen under testdata, oldest first:
// each store stays there, and every later version of ckpt reads them all.
var Versions = []int{1, 2}

// Version is the store format version the newest frozen store was
// written by.
var Version = Versions[len(Versions)-1]

// Step is one save of the recipe: the workspace holds Tree, then Task is
// saved with Message at Time.
type Step struct {
	Task, Message string
	Time          time.Time
	Tree          testtree.Dir
}

// Steps are the saves, in order. They cover small files (group records),
// a file above the chunk threshold (one chunk, so a plain blob), an
// empty file, an executable, nested and empty directories, a second task,
// and a change, a deletion and a rename between two checkpoints of a task.
func Steps() []Step {
	at := func(min int) time.Time { return time.Date(2026, 1, 2, 3, min, 0, 0, time.UTC) }
	first := testtree.Dir{
		"README.md": testtree.File{Content: "# frozen\n\nA store written once.\n"},
		"empty.txt": testtree.File{},
		"run.sh":    testtree.File{Content: "#!/bin/sh\necho frozen\n", Mode: 0o755},
		"big.bin":   testtree.File{Content: Large()},
		"src": testtree.Dir{
			"main.go": testtree.File{Content: source("main", 40)},
			"util.go": testtree.File{Content: source("util", 60)},
			"deep":    testtree.Dir{"deeper": testtree.Dir{"leaf.txt": testtree.File{Content: "leaf\n"}}},
		},
		"empty": testtree.Dir{},
	}
	second := testtree.Dir{
		"README.md": testtree.File{Content: "# frozen\n\nA store written once, then changed.\n"},
		"empty.txt": testtree.File{},
		"run.sh":    testtree.File{Content: "#!/bin/sh\necho frozen\n", Mode: 0o755},
		"big.bin":   testtree.File{Content: Large()},
		"src": testtree.Dir{
			"main.go":    testtree.File{Content: source("main", 41)},
			"helpers.go": testtree.File{Content: source("util", 60)},
		},
		"empty": testtree.Dir{},
	}
	other := testtree.Dir{
		"notes.txt": testtree.File{Content: "another task\n"},
		"src":       testtree.Dir{"main.go": testtree.File{Content: source("main", 40)}},
	}
	return []Step{
		{Task: "default", Message: "first", Time: at(0), Tree: first},
		{Task: "default", Message: "second", Time: at(1), Tree: second},
		{Task: "other", Message: "other task", Time: at(2), Tree: other},
	}
}

// Large is the content of big.bin: 4.5 MiB, above the default chunk
// threshold, made of a repeated block so that its chunks compress (and
// mostly deduplicate) to almost nothing.
func Large() string {
	block := make([]byte, 4096)
	x := uint32(2463534242)
	for i := range block {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		block[i] = byte(x)
	}
	return string(bytes.Repeat(block, 4608/4))
}

// source is a small Go file of n functions named after name.
func source(name string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "package %s\n", name)
	for i := range n {
		fmt.Fprintf(&b, "\n// F%d returns %d.\nfunc F%d() int { return %d }\n", i, i*i, i, i*i)
	}
	return b.String()
}

// Dir is the directory of the store frozen at format version:
// testdata/store-v<version> at the top of the module.
func Dir(version int) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", fmt.Sprintf("store-v%d", version))
}

// Copy copies the store frozen at format version into a new temporary
// directory and returns it, so a test can open it without touching the
// committed files.
func Copy(t testing.TB, version int) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "store")
	if err := copyTree(Dir(version), dst); err != nil {
		t.Fatalf("copy the frozen store: %v", err)
	}
	return dst
}

// Expected is what a workspace restored to step s holds, as
// testtree.Read reports it.
func Expected(t testing.TB, s Step) map[string]testtree.Entry {
	t.Helper()
	dir := t.TempDir()
	if err := testtree.Write(dir, s.Tree); err != nil {
		t.Fatal(err)
	}
	want, err := testtree.Read(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return want
}

// copyTree copies the regular files and directories under src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o600)
	})
}

// Replace makes the store in dir (closed) the store frozen at Version:
// it removes Dir(Version) and copies dir's files there, all but the lock
// file.
func Replace(dir string) error {
	if err := os.RemoveAll(Dir(Version)); err != nil {
		return err
	}
	if err := copyTree(dir, Dir(Version)); err != nil {
		return err
	}
	return os.Remove(filepath.Join(Dir(Version), "lock"))
}
