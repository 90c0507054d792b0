//go:build linux

package main

import (
	"context"
	_ "embed"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// realModulesCorpus is the -corpus value that fetches the pinned module set.
const realModulesCorpus = "gomodcache"

//go:embed realmods.txt
var realModules string

// pinnedModules returns the "path@version" arguments of realmods.txt.
func pinnedModules() ([]string, error) {
	var mods []string
	for i, line := range strings.Split(realModules, "\n") {
		line, _, _ = strings.Cut(line, "#")
		f := strings.Fields(line)
		switch len(f) {
		case 0:
			continue
		case 2:
			mods = append(mods, f[0]+"@"+f[1])
		default:
			return nil, fmt.Errorf("realmods.txt:%d: want \"module version\"", i+1)
		}
	}
	return mods, nil
}

// fetchModules downloads the pinned modules into a fresh module cache at
// dir and removes its download cache, leaving the extracted module trees,
// made writable like a working tree's: the real corpus.
// The go command verifies every module against the checksum database, so
// the bytes are the same on every machine.
func fetchModules(ctx context.Context, dir string) error {
	mods, err := pinnedModules()
	if err != nil {
		return err
	}
	empty, err := os.MkdirTemp("", "ckpt-bench-mod-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(empty)
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	progress("fetching %d pinned modules into %s", len(mods), abs)
	cmd := exec.CommandContext(ctx, "go", append([]string{"mod", "download"}, mods...)...)
	cmd.Dir = empty // outside any module
	cmd.Env = append(os.Environ(), "GOMODCACHE="+abs, "GOFLAGS=-modcacherw", "GOTOOLCHAIN=local", "GOWORK=off", "GO111MODULE=on")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go mod download: %w: %s", err, out)
	}
	if err := os.RemoveAll(filepath.Join(abs, "cache")); err != nil {
		return err
	}
	// The module cache makes files read-only; a working tree's are not.
	return filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.Chmod(p, info.Mode().Perm()|0o200)
	})
}
