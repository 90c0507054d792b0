package walker

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/windows"
)

// TestProtectedWindowsDirectories refuses the drive root and the Windows
// directory, whatever the case the caller spells them in.
func TestProtectedWindowsDirectories(t *testing.T) {
	win, err := windows.GetWindowsDirectory()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.VolumeName(win) + `\`
	for _, p := range []string{root, win, strings.ToLower(win), strings.ToUpper(win) + `\`} {
		if err := CheckWorkspace(p); !errors.Is(err, ErrProtected) {
			t.Errorf("CheckWorkspace(%q) = %v, want ErrProtected", p, err)
		}
	}
	if err := CheckWorkspace(filepath.Join(win, "Temp")); errors.Is(err, ErrProtected) {
		t.Errorf("a subdirectory of %s is refused: %v", win, err)
	}
}
