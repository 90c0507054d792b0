package diffview

import "strings"

// QuotePath returns name as git writes it with core.quotePath on: unchanged
// when it holds only printable ASCII other than `"` and `\`, otherwise
// C-quoted inside double quotes, with bytes >= 0x80 and control characters
// as escapes (\t, \n, ..., or three-digit octal).
func QuotePath(name string) string {
	if !needsQuote(name) {
		return name
	}
	var b strings.Builder
	b.Grow(len(name) + 8)
	b.WriteByte('"')
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\v':
			b.WriteString(`\v`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if c < 0x20 || c >= 0x7f {
				b.WriteByte('\\')
				b.WriteByte('0' + (c >> 6))
				b.WriteByte('0' + ((c >> 3) & 7))
				b.WriteByte('0' + (c & 7))
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

func needsQuote(name string) bool {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return true
		}
	}
	return false
}
