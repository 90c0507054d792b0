package engine

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

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
