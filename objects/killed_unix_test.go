//go:build unix

package objects

import "strings"

// killed reports whether a child's Wait error says Process.Kill ended it
// (SIGKILL).
func killed(err error) bool { return err != nil && strings.Contains(err.Error(), "killed") }
