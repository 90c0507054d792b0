//go:build windows

package osfs

import (
	"path/filepath"
	"strings"
)

// longPath gives an absolute path the \\?\ prefix that lifts Windows'
// 260-character MAX_PATH limit for the wide-character APIs.
func longPath(p string) string {
	if !filepath.IsAbs(p) || strings.HasPrefix(p, `\\?\`) {
		return p
	}
	if strings.HasPrefix(p, `\\`) {
		return `\\?\UNC\` + p[2:]
	}
	return `\\?\` + filepath.Clean(p)
}
