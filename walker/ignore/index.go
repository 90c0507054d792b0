package ignore

import "strings"

// patternList is one layer's patterns from one directory, indexed so that a
// path is decided without trying every pattern. Basename patterns that are
// plain names ("build") or "*" followed by plain text ("*.log") are found by
// map lookups on the path's last component; the others are tried in order.
// Long exclusion lists (the cline and roo profiles hold over a hundred
// "*.ext" lines) then cost a few lookups per path instead of a hundred
// matches. A patternList is immutable and safe for concurrent use.
type patternList struct {
	pats []Pattern
	// Indexed by dirOnly (0: any path, 1: directories only); values are the
	// highest index of a pattern with that key, since the last match wins.
	names [2]map[string]int
	// exts holds "*.ext" suffixes with no other '.', found by one lookup of
	// the name's own extension; suffixes holds the other "*text" suffixes,
	// looked up once per distinct length.
	exts       [2]map[string]int
	suffixes   [2]map[string]int
	suffixLens [2][]int // distinct suffix lengths present in suffixes
	rest       []int    // indices of the patterns not indexed, ascending
}

// newPatternList indexes pats; it returns nil for an empty list.
func newPatternList(pats []Pattern) *patternList {
	if len(pats) == 0 {
		return nil
	}
	l := &patternList{pats: pats}
	for i, p := range pats {
		d := 0
		if p.dirOnly {
			d = 1
		}
		switch {
		case p.glob == "":
			// Matches nothing.
		case p.basename && p.literal == len(p.glob):
			l.names[d] = setIndex(l.names[d], p.glob, i)
		case p.basename && p.endsWith && isExtension(p.glob[1:]):
			l.exts[d] = setIndex(l.exts[d], p.glob[1:], i)
		case p.basename && p.endsWith:
			suffix := p.glob[1:]
			if _, seen := l.suffixes[d][suffix]; !seen && !containsInt(l.suffixLens[d], len(suffix)) {
				l.suffixLens[d] = append(l.suffixLens[d], len(suffix))
			}
			l.suffixes[d] = setIndex(l.suffixes[d], suffix, i)
		default:
			l.rest = append(l.rest, i)
		}
	}
	return l
}

// isExtension reports whether suffix is '.' followed by text with no '.':
// then a name ends with suffix exactly when its last '.' starts suffix.
func isExtension(suffix string) bool {
	return len(suffix) > 1 && suffix[0] == '.' && strings.IndexByte(suffix[1:], '.') < 0
}

func setIndex(m map[string]int, key string, i int) map[string]int {
	if m == nil {
		m = map[string]int{}
	}
	m[key] = i
	return m
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// last returns the index of the last pattern that matches path (relative to
// the patterns' directory), or -1 when none does. It decides exactly as
// trying every Pattern.Match from the last line up would.
func (l *patternList) last(path string, isDir bool) int {
	base := path[strings.LastIndexByte(path, '/')+1:]
	ext := ""
	if dot := strings.LastIndexByte(base, '.'); dot >= 0 {
		ext = base[dot:]
	}
	best := -1
	kinds := 1
	if isDir {
		kinds = 2
	}
	for d := 0; d < kinds; d++ {
		if i, ok := l.names[d][base]; ok && i > best {
			best = i
		}
		if i, ok := l.exts[d][ext]; ok && ext != "" && i > best {
			best = i
		}
		for _, n := range l.suffixLens[d] {
			if n <= len(base) {
				if i, ok := l.suffixes[d][base[len(base)-n:]]; ok && i > best {
					best = i
				}
			}
		}
	}
	for k := len(l.rest) - 1; k >= 0 && l.rest[k] > best; k-- {
		if l.pats[l.rest[k]].Match(path, isDir) {
			return l.rest[k]
		}
	}
	return best
}
