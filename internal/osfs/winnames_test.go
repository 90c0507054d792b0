package osfs

import "testing"

func TestWindowsNameProblem(t *testing.T) {
	for name, bad := range map[string]bool{
		"CON": true, "con": true, "nul.txt": true, "aux.c": true, "COM1.tar.gz": true, "lpt9": true,
		"trailing.": true, "trailing ": true, "a:b": true, "what?": true, "tab\there": true, `q"uote`: true,
		"CONSOLE": false, "nul_file": false, "a.txt": false, ".hidden": false, "ünïcødé 文件.txt": false, "con-fig": false,
	} {
		if got := WindowsNameProblem(name); (got != "") != bad {
			t.Errorf("WindowsNameProblem(%q) = %q, want a problem: %v", name, got, bad)
		}
	}
}
