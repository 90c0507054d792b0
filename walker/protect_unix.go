//go:build !windows

package walker

// systemDirs are the directories of the operating system itself: none on
// unix beyond the root, which CheckWorkspace refuses on every platform.
func systemDirs() []string { return nil }

// samePath compares resolved paths byte for byte.
func samePath(a, b string) bool { return a == b }
