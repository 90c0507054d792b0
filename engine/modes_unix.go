//go:build !windows

package engine

// fsHasModeBits: unix file systems keep permission bits, which saves record
// as the walker reads them.
const fsHasModeBits = true
