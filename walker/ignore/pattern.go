package ignore

import (
	"bytes"
	"strings"
)

// Pattern is one parsed gitignore line. The zero Pattern matches nothing.
// A Pattern is immutable and safe for concurrent use.
type Pattern struct {
	glob     string // the pattern body: no '!', no leading or trailing '/'
	negate   bool   // "!pat": a match re-includes the path
	dirOnly  bool   // "pat/": matches directories only
	basename bool   // no '/' in the body: matched against the last path component
	literal  int    // length of the wildcard-free prefix of glob
	endsWith bool   // "*literal": a suffix comparison is enough
	contains bool   // "*literal*" on a basename: a substring search is enough
}

// ParsePattern parses one line of a gitignore file with git's rules:
// blank lines and lines starting with '#' yield ok == false; unescaped
// trailing spaces are dropped ("\ " keeps one); a leading '!' negates
// ("\!" and "\#" stand for the literal characters); a trailing '/' restricts
// the pattern to directories; a pattern with no other '/' matches a name at
// any depth below its base, one with a '/' (leading or in the middle) is
// anchored to its base directory.
func ParsePattern(line string) (p Pattern, ok bool) {
	line = trimTrailingSpaces(line)
	if line == "" || line[0] == '#' {
		return Pattern{}, false
	}
	if line[0] == '!' {
		p.negate = true
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		p.dirOnly = true
		line = line[:len(line)-1]
	}
	p.basename = strings.IndexByte(line, '/') < 0
	if !p.basename && line[0] == '/' {
		line = line[1:]
	}
	p.glob = line
	p.literal = simpleLength(line)
	p.endsWith = strings.HasPrefix(line, "*") && simpleLength(line[1:]) == len(line)-1
	p.contains = len(line) > 2 && line[0] == '*' && line[len(line)-1] == '*' &&
		simpleLength(line[1:len(line)-1]) == len(line)-2
	return p, line != ""
}

// String returns the pattern in gitignore syntax (normalised: an anchored
// pattern always starts with '/').
func (p Pattern) String() string {
	var b strings.Builder
	if p.negate {
		b.WriteByte('!')
	}
	if !p.basename {
		b.WriteByte('/')
	}
	b.WriteString(p.glob)
	if p.dirOnly {
		b.WriteByte('/')
	}
	return b.String()
}

// Negated reports whether the pattern starts with '!' (re-includes).
func (p Pattern) Negated() bool { return p.negate }

// Match reports whether the pattern matches path, which is slash-separated
// and relative to the directory the pattern was read in (the pattern's
// base); isDir says whether path names a directory. Match does not look at
// ancestors: a path below an ignored directory is not matched by virtue of
// its parent (Rules and Matcher handle that).
func (p Pattern) Match(path string, isDir bool) bool {
	if p.glob == "" || (p.dirOnly && !isDir) {
		return false
	}
	if p.basename {
		return p.matchText(path[strings.LastIndexByte(path, '/')+1:])
	}
	return p.matchText(path)
}

func (p Pattern) matchText(s string) bool {
	switch {
	case p.literal == len(p.glob):
		return s == p.glob
	case p.endsWith && p.basename:
		return strings.HasSuffix(s, p.glob[1:])
	case p.contains && p.basename:
		return strings.Contains(s, p.glob[1:len(p.glob)-1])
	case len(s) < p.literal || s[:p.literal] != p.glob[:p.literal]:
		return false
	}
	return Wildmatch(p.glob, s)
}

// simpleLength is the length of the prefix of s free of glob specials.
func simpleLength(s string) int {
	if i := strings.IndexAny(s, `*?[\`); i >= 0 {
		return i
	}
	return len(s)
}

// trimTrailingSpaces drops trailing spaces that a backslash does not escape.
func trimTrailingSpaces(s string) string {
	lastSpace := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			if lastSpace < 0 {
				lastSpace = i
			}
		case '\\':
			i++
			if i == len(s) {
				return s
			}
			lastSpace = -1
		default:
			lastSpace = -1
		}
	}
	if lastSpace >= 0 {
		return s[:lastSpace]
	}
	return s
}

// ParseLines parses the content of a gitignore-syntax file (.gitignore,
// .ckptignore, info/exclude) into its patterns, in file order. A leading
// UTF-8 byte order mark is skipped and a "\r" before each "\n" dropped, as
// git does.
func ParseLines(data []byte) []Pattern {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var out []Pattern
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
			line = bytes.TrimSuffix(line, []byte("\r"))
		} else {
			data = nil
		}
		if p, ok := ParsePattern(string(line)); ok {
			out = append(out, p)
		}
	}
	return out
}

// ParseStrings parses patterns given one per string, as ParseLines would.
func ParseStrings(lines []string) []Pattern {
	var out []Pattern
	for _, l := range lines {
		if p, ok := ParsePattern(l); ok {
			out = append(out, p)
		}
	}
	return out
}

// ParseLFSAttributes extracts, from the content of a .gitattributes file,
// the path pattern (first field) of every line that sets filter=lfs, parsed
// as gitignore patterns. Comment lines and negative patterns (which
// .gitattributes forbids) are skipped.
func ParseLFSAttributes(data []byte) []Pattern {
	var out []Pattern
	for _, line := range bytes.Split(data, []byte("\n")) {
		fields := strings.Fields(string(line))
		if len(fields) < 2 || fields[0][0] == '#' || fields[0][0] == '!' {
			continue
		}
		for _, attr := range fields[1:] {
			if attr == "filter=lfs" {
				if p, ok := ParsePattern(fields[0]); ok {
					out = append(out, p)
				}
				break
			}
		}
	}
	return out
}

// Escape returns a gitignore pattern that matches exactly the given
// slash-separated path relative to the pattern's base, with every glob
// special and a leading '!' or '#' quoted.
func Escape(path string) string {
	var b strings.Builder
	b.WriteByte('/')
	for i := 0; i < len(path); i++ {
		switch c := path[i]; c {
		case '*', '?', '[', '\\', ' ', '!', '#':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
