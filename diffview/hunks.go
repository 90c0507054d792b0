package diffview

import (
	"bytes"
	"strconv"

	"github.com/pmezard/go-difflib/difflib"
)

// splitLines splits data after each '\n', keeping the terminator (so CRLF
// survives intact); the last line lacks one when data does not end in '\n'.
func splitLines(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	lines := make([]string, 0, lineCount(data))
	start := 0
	for i, c := range data {
		if c == '\n' {
			lines = append(lines, string(data[start:i+1]))
			start = i + 1
		}
	}
	if start < len(data) {
		lines = append(lines, string(data[start:]))
	}
	return lines
}

// groupedOpCodes returns the hunks turning a into b, each with up to context
// lines of context, or nil when a and b are equal. The common head and tail
// are cut off (keeping context lines of each) before the sequence matcher
// runs, so a small edit in a long file costs time linear in the file.
func groupedOpCodes(a, b []string, context int) [][]difflib.OpCode {
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	if head == len(a) && head == len(b) {
		return nil
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	lo := head - min(head, context)
	cut := tail - min(tail, context)
	m := difflib.NewMatcher(a[lo:len(a)-cut], b[lo:len(b)-cut])
	groups := m.GetGroupedOpCodes(context)
	for _, g := range groups {
		for i := range g {
			g[i].I1 += lo
			g[i].I2 += lo
			g[i].J1 += lo
			g[i].J2 += lo
		}
	}
	return groups
}

// countChanges returns the number of inserted and deleted lines in groups.
func countChanges(groups [][]difflib.OpCode) (ins, del int) {
	for _, g := range groups {
		for _, op := range g {
			if op.Tag != 'e' {
				del += op.I2 - op.I1
				ins += op.J2 - op.J1
			}
		}
	}
	return ins, del
}

// hunkRange formats one side of a hunk header the way diff and git do:
// "start,count", "start" when count is 1, and the line before the hunk
// with count 0 for an empty side.
func hunkRange(start, stop int) string {
	n := stop - start
	switch n {
	case 0:
		return strconv.Itoa(start) + ",0"
	case 1:
		return strconv.Itoa(start + 1)
	}
	return strconv.Itoa(start+1) + "," + strconv.Itoa(n)
}

// writeHunks writes the hunks of groups.
func writeHunks(w *bytes.Buffer, a, b []string, groups [][]difflib.OpCode, pal palette) {
	for _, g := range groups {
		first, last := g[0], g[len(g)-1]
		w.WriteString(pal.frag)
		w.WriteString("@@ -" + hunkRange(first.I1, last.I2) + " +" + hunkRange(first.J1, last.J2) + " @@")
		w.WriteString(pal.end(pal.frag))
		w.WriteByte('\n')
		for _, op := range g {
			if op.Tag == 'e' {
				writeLines(w, ' ', a[op.I1:op.I2], "", pal)
				continue
			}
			writeLines(w, '-', a[op.I1:op.I2], pal.old, pal)
			writeLines(w, '+', b[op.J1:op.J2], pal.new, pal)
		}
	}
}

// writeLines writes lines with prefix, adding git's marker after a last
// line that has no newline.
func writeLines(w *bytes.Buffer, prefix byte, lines []string, color string, pal palette) {
	for _, l := range lines {
		w.WriteString(color)
		w.WriteByte(prefix)
		if n := len(l); n > 0 && l[n-1] == '\n' {
			w.WriteString(l[:n-1])
			w.WriteString(pal.end(color))
			w.WriteByte('\n')
			continue
		}
		w.WriteString(l)
		w.WriteString(pal.end(color))
		w.WriteString("\n\\ No newline at end of file\n")
	}
}
