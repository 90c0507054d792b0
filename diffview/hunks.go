package diffview

import (
	"bytes"
	"slices"
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

// exactWork bounds the region (between a's and b's common head and tail)
// the sequence matcher compares with every line as a possible anchor,
// measured as the lines of a times the count of b's most frequent line:
// there a frequent line (a lone brace, a blank line) still anchors a
// match, so an edit far from another in a JSON file does not turn into a
// rewrite of all between. The matcher's cost grows with that product and
// with how many matches it splits the region into (about 10–30 ms at the
// bound where lines repeat most and edits are many); beyond it the
// matcher takes its popular-line heuristic, linear but blind to lines
// that make up over 1% of the region.
const exactWork = 30_000

// opCodes returns the edit turning a into b, equal runs included: the
// common head and tail are cut off before the sequence matcher runs (a
// small edit in a long file costs time linear in the file), and are its
// first and last equal runs. Every view of one change (the patch at any
// context, the stat) is cut from these, so they agree.
func opCodes(a, b []string) []difflib.OpCode {
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	var ops []difflib.OpCode
	if head > 0 {
		ops = append(ops, difflib.OpCode{Tag: 'e', I1: 0, I2: head, J1: 0, J2: head})
	}
	midA, midB := a[head:len(a)-tail], b[head:len(b)-tail]
	if len(midA)+len(midB) > 0 {
		m := difflib.NewMatcherWithJunk(midA, midB, len(midA)*mostFrequent(midB) > exactWork, nil)
		for _, op := range m.GetOpCodes() {
			op.I1, op.I2, op.J1, op.J2 = op.I1+head, op.I2+head, op.J1+head, op.J2+head
			ops = append(ops, op)
		}
	}
	if tail > 0 {
		ops = append(ops, difflib.OpCode{Tag: 'e', I1: len(a) - tail, I2: len(a), J1: len(b) - tail, J2: len(b)})
	}
	return ops
}

// mostFrequent is how often lines' most frequent line occurs in it.
func mostFrequent(lines []string) int {
	counts := make(map[string]int, len(lines))
	most := 0
	for _, l := range lines {
		counts[l]++
		most = max(most, counts[l])
	}
	return most
}

// groupedOpCodes returns the hunks turning a into b, each with up to context
// lines of context, or nil when a and b are equal.
func groupedOpCodes(a, b []string, context int) [][]difflib.OpCode {
	return hunks(opCodes(a, b), context)
}

// hunks groups ops into hunks with up to context equal lines around each
// change: an equal run longer than twice the context ends one hunk and
// starts the next; none when nothing changed.
func hunks(ops []difflib.OpCode, context int) [][]difflib.OpCode {
	if !slices.ContainsFunc(ops, func(op difflib.OpCode) bool { return op.Tag != 'e' }) {
		return nil
	}
	ops = slices.Clone(ops)
	if first := &ops[0]; first.Tag == 'e' {
		first.I1, first.J1 = max(first.I1, first.I2-context), max(first.J1, first.J2-context)
	}
	if last := &ops[len(ops)-1]; last.Tag == 'e' {
		last.I2, last.J2 = min(last.I2, last.I1+context), min(last.J2, last.J1+context)
	}
	var groups [][]difflib.OpCode
	var cur []difflib.OpCode
	for _, op := range ops {
		if op.Tag == 'e' && op.I2-op.I1 > 2*context {
			cur = append(cur, difflib.OpCode{Tag: 'e', I1: op.I1, I2: op.I1 + context, J1: op.J1, J2: op.J1 + context})
			groups = append(groups, cur)
			cur = nil
			op.I1, op.J1 = op.I2-context, op.J2-context
		}
		cur = append(cur, op)
	}
	if len(cur) > 1 || len(cur) == 1 && cur[0].Tag != 'e' {
		groups = append(groups, cur)
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
