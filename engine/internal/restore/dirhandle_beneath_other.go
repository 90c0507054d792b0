//go:build !linux

package restore

// openBeneath is not available here: a directory is opened through its
// parent, one name at a time.
func openBeneath(dirHandle, string) (dirHandle, error) { return dirHandle{}, errNoBeneath }
