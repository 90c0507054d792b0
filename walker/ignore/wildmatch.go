package ignore

import "strings"

// Results of one wildmatch step. The two abort values prune the search:
// abortAll means no later text position can match either, abortToStarStar
// means only an enclosing "**" could still find a match.
const (
	wmMatch = iota
	wmNoMatch
	wmAbortAll
	wmAbortToStarStar
)

// Wildmatch reports whether text matches the glob pattern with git's
// wildmatch semantics in pathname mode (WM_PATHNAME, case-sensitive):
// "*", "?" and bracket expressions never match '/', "**" between slashes
// (or at either end) matches any number of directories, a backslash quotes
// the next byte, "[!...]" and "[^...]" negate a class, and POSIX classes such
// as "[[:digit:]]" are understood for ASCII. A malformed bracket expression
// never matches. Wildmatch is a pure function, safe for concurrent use.
func Wildmatch(pattern, text string) bool {
	return dowild(pattern, text) == wmMatch
}

// byteAt returns s[i], or 0 past the end (the C string terminator).
func byteAt(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

func dowild(p, text string) int {
	ti := 0
	for pi := 0; pi < len(p); pi, ti = pi+1, ti+1 {
		pc := p[pi]
		if ti >= len(text) && pc != '*' {
			return wmAbortAll
		}
		var tc byte
		if ti < len(text) {
			tc = text[ti]
		}
		switch pc {
		case '\\':
			pi++
			if tc != byteAt(p, pi) {
				return wmNoMatch
			}
		case '?':
			if tc == '/' {
				return wmNoMatch
			}
		case '*':
			return matchStar(p, pi, text, ti)
		case '[':
			next, r := matchClass(p, pi, tc)
			if r != wmMatch {
				return r
			}
			pi = next
		default:
			if tc != pc {
				return wmNoMatch
			}
		}
	}
	if ti < len(text) {
		return wmNoMatch
	}
	return wmMatch
}

// matchStar handles a run of '*' starting at p[pi] against text[ti:].
func matchStar(p string, pi int, text string, ti int) int {
	matchSlash := false
	pi++
	if pi < len(p) && p[pi] == '*' {
		prev := pi - 2
		for pi < len(p) && p[pi] == '*' {
			pi++
		}
		if (prev < 0 || p[prev] == '/') &&
			(pi == len(p) || p[pi] == '/' || (p[pi] == '\\' && byteAt(p, pi+1) == '/')) {
			if pi < len(p) && p[pi] == '/' && dowild(p[pi+1:], text[ti:]) == wmMatch {
				return wmMatch
			}
			matchSlash = true
		}
	}
	if pi == len(p) {
		// A trailing "**" matches everything, a trailing "*" only the
		// rest of the current path component.
		if !matchSlash && strings.IndexByte(text[ti:], '/') >= 0 {
			return wmNoMatch
		}
		return wmMatch
	}
	if !matchSlash && p[pi] == '/' {
		// A single star followed by a slash consumes one component.
		slash := strings.IndexByte(text[ti:], '/')
		if slash < 0 {
			return wmNoMatch
		}
		return dowild(p[pi+1:], text[ti+slash+1:])
	}
	for ; ti < len(text); ti++ {
		r := dowild(p[pi:], text[ti:])
		if r != wmNoMatch {
			if !matchSlash || r != wmAbortToStarStar {
				return r
			}
		} else if !matchSlash && text[ti] == '/' {
			return wmAbortToStarStar
		}
	}
	return wmAbortAll
}

// matchClass matches the bracket expression starting at p[pi] ('[')
// against tc. It returns the index of the closing ']' and wmMatch when tc is
// in the class, or a non-match result.
func matchClass(p string, pi int, tc byte) (int, int) {
	pi++
	pc := byteAt(p, pi)
	if pc == '^' {
		pc = '!'
	}
	negated := pc == '!'
	if negated {
		pi++
		pc = byteAt(p, pi)
	}
	var prev byte
	matched := false
	for {
		switch {
		case pc == 0:
			return pi, wmAbortAll
		case pc == '\\':
			pi++
			pc = byteAt(p, pi)
			if pc == 0 {
				return pi, wmAbortAll
			}
			if tc == pc {
				matched = true
			}
		case pc == '-' && prev != 0 && byteAt(p, pi+1) != 0 && byteAt(p, pi+1) != ']':
			pi++
			pc = p[pi]
			if pc == '\\' {
				pi++
				pc = byteAt(p, pi)
				if pc == 0 {
					return pi, wmAbortAll
				}
			}
			if tc <= pc && tc >= prev {
				matched = true
			}
			pc = 0
		case pc == '[' && byteAt(p, pi+1) == ':':
			end := strings.IndexByte(p[pi+2:], ']')
			if end < 0 {
				return pi, wmAbortAll
			}
			start, close := pi+2, pi+2+end
			if close-start-1 < 0 || p[close-1] != ':' {
				// No ":]": the '[' is an ordinary member.
				if tc == '[' {
					matched = true
				}
				break
			}
			in, known := posixClass(p[start:close-1], tc)
			if !known {
				return pi, wmAbortAll
			}
			if in {
				matched = true
			}
			pi, pc = close, 0
		case tc == pc:
			matched = true
		}
		prev = pc
		pi++
		pc = byteAt(p, pi)
		if pc == ']' {
			break
		}
	}
	if matched == negated || tc == '/' {
		return pi, wmNoMatch
	}
	return pi, wmMatch
}

// posixClass reports whether c belongs to the named ASCII class, and whether
// the name is a known class at all.
func posixClass(name string, c byte) (in, known bool) {
	isUpper := c >= 'A' && c <= 'Z'
	isLower := c >= 'a' && c <= 'z'
	isDigit := c >= '0' && c <= '9'
	isGraph := c > ' ' && c < 0x7f
	switch name {
	case "alnum":
		return isUpper || isLower || isDigit, true
	case "alpha":
		return isUpper || isLower, true
	case "blank":
		return c == ' ' || c == '\t', true
	case "cntrl":
		return c < ' ' || c == 0x7f, true
	case "digit":
		return isDigit, true
	case "graph":
		return isGraph, true
	case "lower":
		return isLower, true
	case "print":
		return isGraph || c == ' ', true
	case "punct":
		return isGraph && !isUpper && !isLower && !isDigit, true
	case "space":
		return c == ' ' || c == '\t' || c == '\n' || c == '\r', true
	case "upper":
		return isUpper, true
	case "xdigit":
		return isDigit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'), true
	}
	return false, false
}
