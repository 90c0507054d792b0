package engine

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ckpt/ckpt/internal/objects"
	"github.com/ckpt/ckpt/internal/walker"
)

// canonicalWorkspace resolves path to an absolute, symlink-free directory and
// refuses protected locations.
func canonicalWorkspace(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("workspace %s: %w", path, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("workspace %s: %w", path, err)
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

// storeLocation applies the default store rule: explicit dir, then
// $CKPT_STORE, then $XDG_DATA_HOME/ckpt/workspaces/<hash of the workspace path>.
func storeLocation(workspace, explicit string) (string, error) {
	dir := explicit
	if dir == "" {
		dir = os.Getenv("CKPT_STORE")
	}
	if dir == "" {
		data := os.Getenv("XDG_DATA_HOME")
		if data == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("no store location: set --store, CKPT_STORE or HOME: %w", err)
			}
			data = filepath.Join(home, ".local", "share")
		}
		id := objects.Sum([]byte(workspace))
		dir = filepath.Join(data, "ckpt", "workspaces", hex.EncodeToString(id[:8]))
	}
	return filepath.Abs(dir)
}

// ErrStoreHoldsWorkspace: the store directory is the workspace or one of
// its ancestors, where a restore would delete the store's own files. A
// store inside the workspace is fine: saves exclude it.
var ErrStoreHoldsWorkspace = errors.New("engine: the store may not be the workspace or a directory above it")

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
