package remote

import (
	"errors"
	"strings"
	"testing"
)

func TestValidKeyAcceptsOddCharactersAndRefusesPathTricks(t *testing.T) {
	for _, key := range []string{"a", "packs/ab/abcdef", "with space", "caf\u00e9", "a..b", ".x", "x.", "%2F", strings.Repeat("k", MaxKeyLen)} {
		if err := ValidKey(key); err != nil {
			t.Errorf("ValidKey(%q) = %v", key, err)
		}
	}
	for _, key := range []string{"", "/a", "a/", "a//b", ".", "..", "a/./b", "a/../b", "a\\b", "a\x00", "a\x7f", "\xc3", strings.Repeat("k", MaxKeyLen+1)} {
		if err := ValidKey(key); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("ValidKey(%q) = %v, want ErrInvalidKey", key, err)
		}
	}
}

func TestEscapedSegmentsAreDistinctUnderCaseFoldingAndPortable(t *testing.T) {
	segs := []string{"a", "A", "con", "CON", "nul.txt", "com1", "com0", "x.", "x..y", "%", "~", "é", "e\u0301", "a b", "lpt9.log"}
	seen := map[string]string{}
	for _, s := range segs {
		name := escapeSegment(s)
		if folded := strings.ToLower(name); seen[folded] != "" {
			t.Errorf("%q and %q both escape to %q ignoring case", seen[folded], s, name)
		} else {
			seen[folded] = s
		}
		if strings.HasSuffix(name, ".") || isWindowsDevice(name) || strings.ContainsAny(name, "~\\/:*?\"<>| ") {
			t.Errorf("escapeSegment(%q) = %q, not portable", s, name)
		}
		if back, ok := unescapeSegment(name); !ok || back != s {
			t.Errorf("unescapeSegment(%q) = %q, %v; want %q", name, back, ok, s)
		}
	}
	for _, name := range []string{"~tmp", "~locks", "A", "%4a", "%4", "%", "", "x.", "con"} {
		if seg, ok := unescapeSegment(name); ok {
			t.Errorf("unescapeSegment(%q) = %q, want refusal: escapeSegment never makes it", name, seg)
		}
	}
}

func FuzzSegmentEscapeRoundTrips(f *testing.F) {
	for _, s := range []string{"a", "A", "con.txt", "x.", "%41", "日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seg string) {
		if seg == "" {
			return
		}
		name := escapeSegment(seg)
		back, ok := unescapeSegment(name)
		if !ok || back != seg {
			t.Fatalf("%q -> %q -> %q, %v", seg, name, back, ok)
		}
		if again, ok := unescapeSegment(seg); ok && escapeSegment(again) != seg {
			t.Fatalf("unescapeSegment(%q) = %q, which escapes to %q", seg, again, escapeSegment(again))
		}
	})
}
