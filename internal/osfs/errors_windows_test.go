package osfs

import (
	"os"
	"testing"

	"golang.org/x/sys/windows"
)

func TestIsSymlinkUnsupported(t *testing.T) {
	err := &os.LinkError{Op: "symlink", Old: "t", New: "l", Err: windows.ERROR_PRIVILEGE_NOT_HELD}
	if !IsSymlinkUnsupported(err) || IsSymlinkUnsupported(&os.LinkError{Op: "symlink", Err: windows.ERROR_ALREADY_EXISTS}) {
		t.Fatal("IsSymlinkUnsupported misclassifies")
	}
}
