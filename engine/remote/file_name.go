package remote

import (
	"path/filepath"
	"strings"
)

// The file backend stores key "a/b/c" as the file a/b/c under its root,
// each segment escaped so that distinct keys stay distinct on every file
// system a remote directory may live on: bytes other than lowercase ASCII
// letters, digits, '-', '_' and '.' become %XX (uppercase hex), so names
// survive case-insensitive (macOS, Windows, SMB) and Unicode-normalising
// (macOS) file systems; a trailing '.' and the first letter of a Windows
// device name (con, nul, com1, …) are escaped too. Names that are not the
// escape of some segment (the backend's own ~tmp and ~locks directories,
// stray files) are never listed.

const hexDigits = "0123456789ABCDEF"

// keyPath is the file that holds key under root.
func keyPath(root, key string) string {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = escapeSegment(s)
	}
	return filepath.Join(root, filepath.Join(segs...))
}

func escapeSegment(seg string) string {
	var b strings.Builder
	b.Grow(len(seg))
	device := isWindowsDevice(seg)
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		plain := isPlain(c) && !(i == len(seg)-1 && c == '.') && !(i == 0 && device)
		if plain {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&0xf])
	}
	return b.String()
}

// unescapeSegment inverts escapeSegment, reporting false for a name that
// escapeSegment never produces.
func unescapeSegment(name string) (string, bool) {
	var b strings.Builder
	b.Grow(len(name))
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(name) {
			return "", false
		}
		hi, lo := strings.IndexByte(hexDigits, name[i+1]), strings.IndexByte(hexDigits, name[i+2])
		if hi < 0 || lo < 0 {
			return "", false
		}
		b.WriteByte(byte(hi<<4 | lo))
		i += 2
	}
	seg := b.String()
	if seg == "" || escapeSegment(seg) != name {
		return "", false
	}
	return seg, true
}

func isPlain(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.'
}

// isWindowsDevice reports whether seg, compared as Windows does (ignoring
// case and anything from the first dot), names a device such as "con".
func isWindowsDevice(seg string) bool {
	base, _, _ := strings.Cut(strings.ToLower(seg), ".")
	switch base {
	case "con", "prn", "aux", "nul":
		return true
	}
	if len(base) == 4 && (strings.HasPrefix(base, "com") || strings.HasPrefix(base, "lpt")) {
		return '1' <= base[3] && base[3] <= '9'
	}
	return false
}
