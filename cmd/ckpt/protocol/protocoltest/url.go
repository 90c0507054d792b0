package protocoltest

import (
	"path/filepath"
	"strings"
)

// FileURL is the file:// URL of directory dir (file:///C:/x on Windows),
// as a remote's URL.
func FileURL(dir string) string {
	p := filepath.ToSlash(dir)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return "file://" + p
}
