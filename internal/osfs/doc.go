// Package osfs is ckpt's seam to the operating system: the few file-system
// calls whose semantics differ between Linux, macOS and Windows (locking,
// durability, stable reads of a file, error classes). Everything above it is
// portable Go; each function here states what it guarantees on every
// platform, and its platform files (_linux.go, _darwin.go, _unix.go,
// _windows.go) keep the fast path each system offers.
package osfs
