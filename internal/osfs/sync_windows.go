//go:build windows

package osfs

import "os"

// dataSync: File.Sync is FlushFileBuffers on Windows.
func dataSync(f *os.File) error { return f.Sync() }

func syncDir(string) error { return nil }

func syncFilesystem(string) error { return ErrNoFilesystemSync }

const hasFilesystemSync = false
