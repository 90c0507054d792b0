package osfs

import (
	"strconv"
	"strings"
)

// mountedBelow reports whether a /proc/self/mountinfo text names a mount
// point strictly below dir (an absolute path without symlinks).
func mountedBelow(dir, mountinfo string) bool {
	prefix := strings.TrimSuffix(dir, "/") + "/"
	for line := range strings.Lines(mountinfo) {
		fields := strings.Fields(line)
		if len(fields) < 5 {
			continue
		}
		if mp := UnescapeMountPath(fields[4]); strings.HasPrefix(mp, prefix) {
			return true
		}
	}
	return false
}

// UnescapeMountPath undoes the octal escapes (\040 for a space, \011,
// \012, \134) of a mountinfo path.
func UnescapeMountPath(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
