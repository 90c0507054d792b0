package walker

import (
	"strings"

	"golang.org/x/sys/windows"
)

// systemDirs are the directories of the operating system itself.
func systemDirs() []string {
	d, err := windows.GetWindowsDirectory()
	if err != nil {
		return nil
	}
	return []string{d}
}

// samePath compares resolved paths as NTFS does: without case.
func samePath(a, b string) bool { return strings.EqualFold(a, b) }
