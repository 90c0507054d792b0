//go:build !windows

package protocol

// envNamesEqual compares environment variable names as the system does.
func envNamesEqual(a, b string) bool { return a == b }
