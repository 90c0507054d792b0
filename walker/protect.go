package walker

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrProtected is wrapped by CheckWorkspace (and Walk) for directories that
// must never be a workspace.
var ErrProtected = errors.New("refusing to checkpoint a protected directory")

// CheckWorkspace returns an error wrapping ErrProtected when path, resolved
// through symlinks, is the filesystem root, the home directory, or exactly
// ~/Desktop, ~/Documents or ~/Downloads (subdirectories are allowed), or
// the operating system's own directory (C:\Windows on Windows, compared
// without case there, as the file system does): such sweeps are huge and
// hit permission errors. It fails with the resolution error if path cannot
// be resolved.
func CheckWorkspace(path string) error {
	real, err := resolve(path)
	if err != nil {
		return fmt.Errorf("workspace %s: %w", path, err)
	}
	if real == string(filepath.Separator) || filepath.Dir(real) == real {
		return fmt.Errorf("%w: %s is the filesystem root", ErrProtected, path)
	}
	for _, d := range systemDirs() {
		if samePath(real, d) {
			return fmt.Errorf("%w: %s is the operating system's directory", ErrProtected, path)
		}
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return nil
	}
	realHome, err := resolve(home)
	if err != nil {
		realHome = filepath.Clean(home)
	}
	if samePath(real, realHome) {
		return fmt.Errorf("%w: %s is the home directory", ErrProtected, path)
	}
	for _, sub := range []string{"Desktop", "Documents", "Downloads"} {
		p, err := resolve(filepath.Join(home, sub))
		if err != nil {
			p = filepath.Join(realHome, sub)
		}
		if samePath(real, p) {
			return fmt.Errorf("%w: %s is ~/%s", ErrProtected, path, sub)
		}
	}
	return nil
}

// resolve returns the absolute, symlink-free form of path.
func resolve(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}
