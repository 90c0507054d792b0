package ignore

import (
	"strings"
	"testing"
)

func TestParsePattern(t *testing.T) {
	for _, tc := range []struct {
		line, str string
		ok        bool
	}{
		{"foo", "foo", true},
		{"/foo/", "/foo/", true},
		{"a/b", "/a/b", true},
		{"!*.txt  ", "!*.txt", true},
		{"foo\\ ", "foo\\ ", true},
		{"\\#x", "\\#x", true},
		{"# comment", "", false},
		{"   ", "", false},
		{"/", "", false},
		{"!", "", false},
	} {
		p, ok := ParsePattern(tc.line)
		if ok != tc.ok || (ok && p.String() != tc.str) {
			t.Errorf("ParsePattern(%q) = %q, %v; want %q, %v", tc.line, p.String(), ok, tc.str, tc.ok)
		}
	}
}

func TestRulesPrecedence(t *testing.T) {
	var root Set
	root[LayerProfile] = ParseStrings([]string{"*.log"})
	root[LayerGitignore] = ParseStrings([]string{"!keep.log", "build/"})
	root[LayerExtra] = ParseStrings([]string{"!build/"})
	r := (*Rules)(nil).Child("", root)
	var sub Set
	sub[LayerGitignore] = ParseStrings([]string{"*.log", "/local"})
	s := r.Child("a", sub)
	for _, tc := range []struct {
		rules *Rules
		path  string
		isDir bool
		want  Decision
	}{
		{r, "x.log", false, Excluded},
		{r, "keep.log", false, Included},
		{s, "a/keep.log", false, Excluded}, // deeper .gitignore wins
		{r, "build", true, Included},       // extras beat .gitignore
		{r, "build", false, NoMatch},
		{s, "a/local", false, Excluded},
		{s, "a/local/x", false, NoMatch},
	} {
		if got := tc.rules.Match(tc.path, tc.isDir); got != tc.want {
			t.Errorf("Match(%q, %v) = %v, want %v", tc.path, tc.isDir, got, tc.want)
		}
	}
}

// FuzzPattern checks that parsing and matching never panic, that Escape
// produces a pattern matching exactly its path, and that the fast paths
// agree with the general wildmatch.
func FuzzPattern(f *testing.F) {
	for _, s := range []string{"*.txt", "a/**/b", "[!a-c]x", "\\#x", "foo/", "[[:alpha:]]", "**", "a[", "*", "x\\"} {
		f.Add(s, "a/b.txt")
	}
	f.Fuzz(func(t *testing.T, line, path string) {
		if strings.ContainsAny(path, "\x00\n") || path == "" || strings.HasPrefix(path, "/") || strings.HasSuffix(path, "/") {
			return
		}
		if p, ok := ParsePattern(line); ok {
			got := p.Match(path, true)
			text := path
			if p.basename {
				text = path[strings.LastIndexByte(path, '/')+1:]
			}
			if want := Wildmatch(p.glob, text); got != want {
				t.Fatalf("pattern %q on %q: Match %v, wildmatch %v", line, path, got, want)
			}
		}
		e, ok := ParsePattern(Escape(path))
		if !ok || !e.Match(path, false) || e.Match(path+"x", false) {
			t.Fatalf("Escape(%q) = %q does not match exactly its path", path, Escape(path))
		}
	})
}
