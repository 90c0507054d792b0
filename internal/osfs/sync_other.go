//go:build unix && !linux && !darwin

package osfs

import "os"

func dataSync(f *os.File) error { return f.Sync() }

func syncFilesystem(string) error { return ErrNoFilesystemSync }

const hasFilesystemSync = false
