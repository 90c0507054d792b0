package ignore

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// lastByScan is the definition patternList.last must agree with.
func lastByScan(pats []Pattern, path string, isDir bool) int {
	for i := len(pats) - 1; i >= 0; i-- {
		if pats[i].Match(path, isDir) {
			return i
		}
	}
	return -1
}

func TestPatternListAgreesWithScanningEveryPattern(t *testing.T) {
	lines := []string{"build", "build/", "*.log", "*.log/", "!keep.log", "*", "*~", ".DS_Store", "a*b", "/root.txt",
		"src/*.go", "**/gen", "doc/", "!doc/", "*.tar.gz", "x?z", "[ab].c", "*.c", "!*.c", "node_modules/", "\\#hash", "*o", "*.env*", "*og*", "!*.lo*", "*.", "*.gz/"}
	names := []string{"build", "a.log", "keep.log", "x~", ".DS_Store", "ab", "axb", "root.txt", "main.go", "gen", "doc",
		"f.tar.gz", "xyz", "a.c", "b.c", "node_modules", "#hash", "o", "foo", "log", ".log", "c", ".env.local", "a.", "x.gz", "logo"}
	rng := rand.New(rand.NewPCG(7, 11))
	for round := 0; round < 500; round++ {
		var pats []Pattern
		for n := rng.IntN(12); n >= 0; n-- {
			if p, ok := ParsePattern(lines[rng.IntN(len(lines))]); ok {
				pats = append(pats, p)
			}
		}
		l := newPatternList(pats)
		for k := 0; k < 20; k++ {
			parts := []string{}
			for d := rng.IntN(3); d >= 0; d-- {
				parts = append(parts, names[rng.IntN(len(names))])
			}
			path, isDir := strings.Join(parts, "/"), rng.IntN(2) == 0
			want := lastByScan(pats, path, isDir)
			got := -1
			if l != nil {
				got = l.last(path, isDir)
			}
			if got != want {
				t.Fatalf("patterns %v, path %q dir=%v: last = %d, want %d", pats, path, isDir, got, want)
			}
		}
	}
}

func BenchmarkRulesMatchClineProfile(b *testing.B) {
	var lines []string
	for _, ext := range strings.Fields("jpg jpeg png gif bmp ico webp tiff tif raw heic avif eps psd 3gp aac aiff asf avi divx flac m4a m4v mkv mov mp3 mp4 mpeg mpg ogg opus rm rmvb vob wav webm wma wmv DS_Store bak cache crdownload dmp dump eslintcache lock log old part partial pid pyc pyo swo swp tmp temp zip tar gz tgz rar 7z iso dmg exe dll so dylib o a class jar war") {
		lines = append(lines, "*."+ext)
	}
	lines = append(lines, "node_modules/", "__pycache__/", "build/", "dist/", "target/dependency/", "vendor/")
	r := (*Rules)(nil).Child("", Set{LayerProfile: ParseStrings(lines)})
	paths := []string{"src/main.go", "src/lib/util.ts", "README.md", "assets/logo.svg", "pkg/a/b/c/d.rs"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, p := range paths {
			r.Match(p, false)
		}
	}
}

// The literal, suffix and substring shortcuts of matchText decide exactly as
// the full wildcard matcher would.
func TestMatchTextShortcutsAgreeWithWildmatch(t *testing.T) {
	globs := []string{"*.log", "*.env*", "*og*", "*.", "*~", "*.tar.gz", "build", "*", "**", "*a*b*", "\\*x*", "*[ab]*"}
	names := []string{"a.log", ".env", ".env.local", "x.env", "logo", "dog", "a.", "x~", "f.tar.gz", "build", "", "ab", "ba", "*x", "xx"}
	for _, g := range globs {
		p, ok := ParsePattern(g)
		if !ok {
			t.Fatalf("pattern %q did not parse", g)
		}
		for _, n := range names {
			if got, want := p.matchText(n), Wildmatch(p.glob, n); got != want {
				t.Errorf("%q on %q: matchText %v, Wildmatch %v", g, n, got, want)
			}
		}
	}
}
