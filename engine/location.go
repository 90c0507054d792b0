package engine

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ckpt/ckpt/internal/osfs"
	"github.com/ckpt/ckpt/objects"
	"github.com/ckpt/ckpt/walker"
)

// canonicalWorkspace resolves path to an absolute, symlink-free directory and
// refuses protected locations.
func canonicalWorkspace(path string) (string, error) {
	real, err := realPath(path)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("workspace %s: %w", path, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%w: workspace %s is not a directory", ErrBadRequest, path)
	}
	if err := walker.CheckWorkspace(real); err != nil {
		return "", err
	}
	return real, nil
}

// DefaultStoreDir returns the directory of workspace's store when
// Options.StoreDir is empty: <user data dir>/ckpt/workspaces/<id>, where the
// user data dir follows the platform's convention ($XDG_DATA_HOME or
// ~/.local/share on Linux, ~/Library/Application Support on macOS,
// %LOCALAPPDATA% on Windows) and <id> is derived from the workspace's
// canonical path. It neither opens nor locks the store, which may not exist.
func DefaultStoreDir(workspace string) (string, error) {
	real, err := realPath(workspace)
	if err != nil {
		return "", err
	}
	return defaultStoreDir(real)
}

// realPath is the absolute, symlink-free path of an existing workspace.
func realPath(workspace string) (string, error) {
	abs, err := filepath.Abs(workspace)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return "", fmt.Errorf("workspace %s: %w", workspace, err)
	}
	return abs, nil
}

// defaultStoreDir is DefaultStoreDir of a canonical workspace path.
func defaultStoreDir(workspace string) (string, error) {
	data, err := osfs.UserDataDir()
	if err != nil {
		return "", fmt.Errorf("no store location: %w", err)
	}
	id := objects.Sum([]byte(workspace))
	return filepath.Join(data, "ckpt", "workspaces", hex.EncodeToString(id[:8])), nil
}

// storeLocation is the explicit store directory, else the default one.
func storeLocation(workspace, explicit string) (string, error) {
	dir := explicit
	if dir == "" {
		var err error
		if dir, err = defaultStoreDir(workspace); err != nil {
			return "", err
		}
	}
	return filepath.Abs(dir)
}

// checkStoreLocation refuses a store that is the workspace (canonical) or
// contains it. Paths are compared with symlinks resolved; a store that does
// not exist yet is resolved through its nearest existing ancestor.
func checkStoreLocation(workspace, storeDir string) error {
	store, err := canonicalPath(storeDir)
	if err != nil {
		return fmt.Errorf("store %s: %w", storeDir, err)
	}
	if store == workspace || strings.HasPrefix(workspace, strings.TrimSuffix(store, string(filepath.Separator))+string(filepath.Separator)) {
		return fmt.Errorf("%w: store %s holds workspace %s; a store belongs outside the workspace (or inside it, where saves exclude it)",
			ErrStoreHoldsWorkspace, storeDir, workspace)
	}
	return nil
}

// canonicalPath resolves the symlinks of an absolute path whose last
// elements may not exist yet.
func canonicalPath(p string) (string, error) {
	p = filepath.Clean(p)
	var rest []string
	for {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", err
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}
