package osfs

import "strings"

// windowsReserved are the device names Windows reserves in every
// directory, with or without an extension (compared without case).
var windowsReserved = map[string]bool{
	"CON": true, "PRN": true, "AUX": true, "NUL": true,
	"COM1": true, "COM2": true, "COM3": true, "COM4": true, "COM5": true, "COM6": true, "COM7": true, "COM8": true, "COM9": true,
	"LPT1": true, "LPT2": true, "LPT3": true, "LPT4": true, "LPT5": true, "LPT6": true, "LPT7": true, "LPT8": true, "LPT9": true,
}

// WindowsNameProblem says why Windows cannot hold a file named name (one
// path element), or "" when it can: a reserved device name (CON, nul.txt,
// aux.c), a trailing dot or space, or a character Windows forbids in names
// (< > : " / \ | ? * and control characters).
func WindowsNameProblem(name string) string {
	base, _, _ := strings.Cut(name, ".")
	switch {
	case windowsReserved[strings.ToUpper(strings.TrimRight(base, " "))]:
		return "Windows reserves this name for a device"
	case strings.HasSuffix(name, ".") || strings.HasSuffix(name, " "):
		return "Windows drops a trailing dot or space from a name"
	case strings.ContainsFunc(name, func(r rune) bool { return r < 32 || strings.ContainsRune(`<>:"/\|?*`, r) }):
		return "Windows forbids this name's characters (< > : \" / \\ | ? * or control characters)"
	}
	return ""
}

// NameProblem says why this platform's file systems cannot hold a file
// named name (one path element), or "" when they can: WindowsNameProblem
// on Windows; nothing on unix, where only "/" and NUL are excluded and no
// stored name holds them.
func NameProblem(name string) string { return nameProblem(name) }
