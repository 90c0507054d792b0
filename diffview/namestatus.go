package diffview

import (
	"bufio"
	"io"
)

// statusLetter returns the --name-status code of a change: A, D, M (also for
// mode-only changes), T, or R100 (renames are always exact).
func statusLetter(s Status) string {
	switch s {
	case StatusAdded:
		return "A"
	case StatusDeleted:
		return "D"
	case StatusTypeChange:
		return "T"
	case StatusRenamed:
		return "R100"
	}
	return "M"
}

// WriteNameStatus writes one `X\tpath` line per change, as git diff
// --name-status does (`R100\told\tnew` for renames), paths quoted like git.
// It loads no contents; write errors are returned.
func WriteNameStatus(w io.Writer, changes []Change) error {
	bw := bufio.NewWriter(w)
	for _, c := range changes {
		bw.WriteString(statusLetter(c.Status) + "\t")
		if c.Status == StatusRenamed {
			bw.WriteString(QuotePath(c.OldPath) + "\t")
		}
		bw.WriteString(QuotePath(c.Path) + "\n")
	}
	return bw.Flush()
}
