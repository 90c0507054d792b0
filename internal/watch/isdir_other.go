//go:build !windows

package watch

import "os"

// isDirNow reports whether path is a directory now (not a link to one).
func isDirNow(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.IsDir()
}
