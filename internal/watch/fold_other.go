//go:build !linux

package watch

import "strings"

// foldName is the key a directory's entry name is known by: NTFS and
// APFS compare names without case by default, and an event may spell a
// name in another case than the one the caller watched.
func foldName(name string) string { return strings.ToLower(name) }
