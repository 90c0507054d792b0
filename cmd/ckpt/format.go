package main

import (
	"fmt"
	"strings"
	"unicode"
)

// humanBytes formats a byte count with a binary unit.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// subject is a checkpoint message as one line of a listing: its first
// line, " …" when more follow, with control characters shown as spaces
// and bytes that are not UTF-8 as U+FFFD, so that no message breaks the
// listing's rows or columns (show prints the whole message; --json keeps
// its bytes).
func subject(msg string) string {
	first, rest, more := strings.Cut(strings.TrimSpace(msg), "\n")
	first = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(strings.TrimRight(first, "\r"), "\uFFFD"))
	if more && strings.TrimSpace(rest) != "" {
		first += " …"
	}
	return first
}
