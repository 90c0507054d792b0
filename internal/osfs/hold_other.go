//go:build !linux

package osfs

// HoldFlags are the flags that open a file only to keep it, and whether
// the platform has them: it has not (see hold_linux.go).
func HoldFlags() (flags int, ok bool) { return 0, false }
