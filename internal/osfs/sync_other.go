//go:build unix && !linux && !darwin

package osfs

import "os"

func dataSync(f *os.File) error { return f.Sync() }

func dataSyncFd(fd int) error { return fsyncFd(fd) }

func syncFd(fd int) error { return fsyncFd(fd) }

func syncFilesystem(*os.File) error { return ErrNoFilesystemSync }

func soundFilesystemSync(*os.File, string) bool { return false }

func dirtyBytes() (int64, bool) { return 0, false }

const hasFilesystemSync = false
