package osfs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// NameRules says how a file system matches names, as ProbeNames found it.
type NameRules struct {
	// FoldCase: names differing only in letter case are the same file
	// (default on macOS and Windows).
	FoldCase bool
	// Normalizes: names differing only in Unicode normalization (NFC
	// "é" vs NFD "e"+U+0301) are the same file (APFS and HFS+).
	Normalizes bool
}

// ProbeNames finds how the file system holding dir matches names, by
// creating one empty file in dir (removed before it returns) and looking it
// up under a case-changed and a normalization-changed spelling. It needs
// write access to dir.
func ProbeNames(dir string) (NameRules, error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return NameRules{}, fmt.Errorf("probe names: %w", err)
	}
	base := ".ckpt-probe-" + hex.EncodeToString(b[:])
	made := filepath.Join(dir, base+"-ae\u0301")
	f, err := os.OpenFile(made, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return NameRules{}, fmt.Errorf("probe names: %w", err)
	}
	defer os.Remove(made)
	if err := f.Close(); err != nil {
		return NameRules{}, fmt.Errorf("probe names: %w", err)
	}
	var r NameRules
	if r.FoldCase, err = exists(filepath.Join(dir, base+"-AE\u0301")); err == nil {
		r.Normalizes, err = exists(filepath.Join(dir, base+"-a\u00e9"))
	}
	if err != nil {
		return NameRules{}, fmt.Errorf("probe names: %w", err)
	}
	return r, nil
}

// exists reports whether name exists; not found is not an error.
func exists(name string) (bool, error) {
	_, err := os.Lstat(name)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
