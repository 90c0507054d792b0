package diffview

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// statLine is one file of a --stat listing.
type statLine struct {
	name   string
	binary bool // binary or too large: show sizes, not line counts
	// same: both sides hold the same content (a rename, a mode change),
	// so a binary line shows "Bin" and no sizes, as git's does.
	same     bool
	ins, del int
	oldSize  int64
	newSize  int64
}

// WriteStat writes a git-style --stat summary of changes: one
// ` path | N ++--` line per change with the bar scaled to fit
// opts.StatWidth columns, `Bin X -> Y bytes` for binary and too-large
// files (`Bin` alone for a binary file renamed or with its mode changed,
// whose content is the same), and a closing ` N files changed, X insertions(+), Y deletions(-)`
// line. Nothing is written for an empty change list. Contents are loaded
// only for changes whose blob changed, on every core. Errors are wrapped
// with %w.
func WriteStat(w io.Writer, changes []Change, from, to BlobLoader, opts Options) error {
	opts = opts.withDefaults()
	if len(changes) == 0 {
		return nil
	}
	lines := make([]statLine, len(changes))
	err := inOrder(len(changes), func(i int) (err error) {
		lines[i], err = statOf(changes[i], from, to, opts)
		return err
	}, func(int) error { return nil })
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	writeStatLines(bw, lines, opts.StatWidth, newPalette(opts.Color))
	return bw.Flush()
}

// statOf measures one change. A type change counts as the removal of every
// old line and the addition of every new one, as git counts it.
func statOf(c Change, from, to BlobLoader, opts Options) (statLine, error) {
	l := statLine{name: QuotePath(c.Path)}
	if c.Status == StatusRenamed {
		l.name = renameLabel(c.OldPath, c.Path)
	}
	if c.Before != nil {
		l.oldSize = c.Before.Size
	}
	if c.After != nil {
		l.newSize = c.After.Size
	}
	if c.Before != nil && c.After != nil && c.Before.ID == c.After.ID {
		prefix, err := loadSide(to, c.Path, c.After, true)
		l.binary, l.same = IsBinary(prefix), true
		return l, err
	}
	ct, err := loadContents(c.beforePath(), c.Path, c.Before, c.After, from, to, opts)
	if err != nil {
		return statLine{}, err
	}
	l.binary = ct.binary || ct.tooLarge
	a, b := splitLines(ct.before), splitLines(ct.after)
	switch {
	case l.binary:
	case c.Status == StatusTypeChange:
		l.ins, l.del = len(b), len(a)
	default:
		l.ins, l.del = countChanges(groupedOpCodes(a, b, 0))
	}
	return l, nil
}

// renameLabel writes a rename as git's stat does: "dir/{a => b}" around the
// common leading and trailing path components, "a => b" otherwise.
func renameLabel(oldPath, newPath string) string {
	if needsQuote(oldPath) || needsQuote(newPath) {
		return QuotePath(oldPath) + " => " + QuotePath(newPath)
	}
	pfx := 0
	for i := 0; i < len(oldPath) && i < len(newPath) && oldPath[i] == newPath[i]; i++ {
		if oldPath[i] == '/' {
			pfx = i + 1
		}
	}
	sfx := 0
	for i, j := len(oldPath)-1, len(newPath)-1; i >= pfx && j >= pfx && oldPath[i] == newPath[j]; i, j = i-1, j-1 {
		if oldPath[i] == '/' {
			sfx = len(oldPath) - i
		}
	}
	if pfx == 0 && sfx == 0 {
		return oldPath + " => " + newPath
	}
	return oldPath[:pfx] + "{" + oldPath[pfx:len(oldPath)-sfx] + " => " + newPath[pfx:len(newPath)-sfx] + "}" + oldPath[len(oldPath)-sfx:]
}

// statLayout is the column split of a stat listing.
type statLayout struct {
	nameWidth, numberWidth, graphWidth, maxChange int
}

// layoutStat splits width columns between names, counts and the bar: each
// gets what it wants when everything fits; otherwise the bar gets at most
// 3/8 of the width (and at least 6 columns) and names the rest, as git does.
func layoutStat(lines []statLine, width int) statLayout {
	var ly statLayout
	maxName := 0
	for _, l := range lines {
		maxName = max(maxName, len(l.name))
		if l.binary {
			ly.numberWidth = max(ly.numberWidth, 3) // "Bin"
		} else {
			ly.maxChange = max(ly.maxChange, l.ins+l.del)
		}
	}
	ly.numberWidth = max(ly.numberWidth, len(strconv.Itoa(ly.maxChange)))
	width = max(width, 16+6+ly.numberWidth)
	ly.nameWidth, ly.graphWidth = maxName, ly.maxChange
	fixed := ly.numberWidth + 6
	if ly.nameWidth+fixed+ly.graphWidth > width {
		if ly.graphWidth > width*3/8-fixed {
			ly.graphWidth = max(width*3/8-fixed, 6)
		}
		if ly.nameWidth > width-fixed-ly.graphWidth {
			ly.nameWidth = width - fixed - ly.graphWidth
		} else {
			ly.graphWidth = width - fixed - ly.nameWidth
		}
	}
	return ly
}

// scaleLinear maps a count in [0, maxChange] onto [0, width] columns,
// giving any non-zero count at least one column.
func scaleLinear(n, width, maxChange int) int {
	if n == 0 {
		return 0
	}
	return 1 + n*(width-1)/maxChange
}

// bars returns how many '+' and '-' columns a line gets.
func (ly statLayout) bars(ins, del int) (int, int) {
	if ly.graphWidth >= ly.maxChange {
		return ins, del
	}
	total := scaleLinear(ins+del, ly.graphWidth, ly.maxChange)
	if total < 2 && ins > 0 && del > 0 {
		total = 2
	}
	if ins < del {
		ins = scaleLinear(ins, ly.graphWidth, ly.maxChange)
		return ins, total - ins
	}
	del = scaleLinear(del, ly.graphWidth, ly.maxChange)
	return total - del, del
}

// fitName shortens name to width columns: "..." and the tail of the name,
// starting at a slash when the tail contains one.
func fitName(name string, width int) string {
	if len(name) <= width {
		return name + strings.Repeat(" ", width-len(name))
	}
	tail := name[len(name)-max(width-3, 0):]
	if i := strings.IndexByte(tail, '/'); i >= 0 {
		tail = tail[i:]
	}
	s := "..." + tail
	return s + strings.Repeat(" ", max(width-len(s), 0))
}

func writeStatLines(w *bufio.Writer, lines []statLine, width int, pal palette) {
	ly := layoutStat(lines, width)
	var ins, del int
	for _, l := range lines {
		w.WriteString(" " + fitName(l.name, ly.nameWidth) + " | ")
		switch {
		case l.binary && l.same:
			fmt.Fprintf(w, "%*s\n", ly.numberWidth, "Bin")
			continue
		case l.binary:
			fmt.Fprintf(w, "%*s %d -> %d bytes\n", ly.numberWidth, "Bin", l.oldSize, l.newSize)
			continue
		}
		ins, del = ins+l.ins, del+l.del
		fmt.Fprintf(w, "%*d", ly.numberWidth, l.ins+l.del)
		if l.ins+l.del > 0 {
			p, m := ly.bars(l.ins, l.del)
			w.WriteString(" ")
			writeBar(w, '+', p, pal.new, pal)
			writeBar(w, '-', m, pal.old, pal)
		}
		w.WriteByte('\n')
	}
	fmt.Fprintf(w, " %d file%s changed", len(lines), plural(len(lines)))
	if ins > 0 || del == 0 {
		fmt.Fprintf(w, ", %d insertion%s(+)", ins, plural(ins))
	}
	if del > 0 || ins == 0 {
		fmt.Fprintf(w, ", %d deletion%s(-)", del, plural(del))
	}
	w.WriteByte('\n')
}

func writeBar(w *bufio.Writer, c byte, n int, color string, pal palette) {
	if n == 0 {
		return
	}
	w.WriteString(color + strings.Repeat(string(c), n) + pal.end(color))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
