//go:build unix

package osfs

import "os"

func openShared(path string) (*os.File, error) { return os.Open(path) }
