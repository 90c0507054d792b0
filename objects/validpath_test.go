package objects

import "testing"

// A path is valid when every element is a name: any bytes but '/' and NUL,
// none empty, "." or "..".
func TestValidPathTakesNamesAndOnlyNames(t *testing.T) {
	for _, p := range []string{"a", "a/b/c", ".hidden/x", "a\xff/\xfe", "a b/...", "..x/x.."} {
		if err := ValidPath(p); err != nil {
			t.Errorf("ValidPath(%q) = %v, want nil", p, err)
		}
	}
	for _, p := range []string{"", ".", "..", "/a", "a/", "a//b", "a/./b", "a/../b", "../a", "a\x00b"} {
		if err := ValidPath(p); err == nil {
			t.Errorf("ValidPath(%q) = nil, want an error", p)
		}
	}
}
