package diffview

import (
	"bufio"
	"bytes"
	"io"
	"strings"

	"github.com/ckpt/ckpt/objects"
	"github.com/pmezard/go-difflib/difflib"
)

// WritePatch writes changes as a git-style unified patch (see the package
// documentation for the format). Contents are loaded from from (the
// "before" side) and to (the "after" side) on every core, a few changes
// ahead of the output, which keeps the order of changes. Loader and write
// errors are returned wrapped with %w; the sections before the change
// that failed are written, and stay.
func WritePatch(w io.Writer, changes []Change, from, to BlobLoader, opts Options) error {
	opts = opts.withDefaults()
	var fps []filePatch
	for _, c := range changes {
		fps = append(fps, filePatchesOf(c)...)
	}
	pw := patchWriter{from: from, to: to, opts: opts, pal: newPalette(opts.Color)}
	sections := make([]bytes.Buffer, len(fps))
	bw := bufio.NewWriter(w)
	err := inOrder(len(fps), func(i int) error {
		return pw.write(&sections[i], fps[i])
	}, func(i int) error {
		_, err := bw.Write(sections[i].Bytes())
		sections[i] = bytes.Buffer{}
		return err
	})
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return err
}

// filePatch is one `diff --git` section. A type change becomes two: the
// old entry deleted, then the new one added, as git writes it.
type filePatch struct {
	oldPath, newPath string
	before, after    *Side
	rename           bool
}

func filePatchesOf(c Change) []filePatch {
	if c.Status == StatusTypeChange {
		return []filePatch{
			{oldPath: c.Path, newPath: c.Path, before: c.Before},
			{oldPath: c.Path, newPath: c.Path, after: c.After},
		}
	}
	return []filePatch{{oldPath: c.beforePath(), newPath: c.Path, before: c.Before, after: c.After, rename: c.Status == StatusRenamed}}
}

// patchWriter renders sections; it is safe for concurrent use.
type patchWriter struct {
	from, to BlobLoader
	opts     Options
	pal      palette
}

// gitMode returns the mode git records for a side: 120000 for symlinks,
// 100755 when any execute bit is set, 100644 otherwise.
func gitMode(s *Side) string {
	switch {
	case s.Kind == objects.KindSymlink:
		return "120000"
	case s.Mode&0o111 != 0:
		return "100755"
	}
	return "100644"
}

// gitEmptyBlob is git's object name for empty content. GNU patch recognises
// empty files being created or deleted only by this name in the index line.
const gitEmptyBlob = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"

// shortID returns the name of a side on the index line: zeros for an absent
// side, git's empty-blob name for empty content, the short ckpt blob id
// otherwise.
func shortID(s *Side) string {
	switch {
	case s == nil:
		return strings.Repeat("0", objects.ShortIDLen)
	case s.Size == 0:
		return gitEmptyBlob[:objects.ShortIDLen]
	}
	return s.ID.Short()
}

// write renders one section into w; a section git could not express (only
// mode bits git does not record changed) is empty.
func (pw *patchWriter) write(w *bytes.Buffer, fp filePatch) error {
	both := fp.before != nil && fp.after != nil
	sameContent := both && fp.before.ID == fp.after.ID
	modeChange := both && gitMode(fp.before) != gitMode(fp.after)
	if sameContent && !modeChange && !fp.rename {
		return nil
	}
	var ct contents
	var a, b []string
	var groups [][]difflib.OpCode
	if !sameContent {
		var err error
		ct, err = loadContents(fp.oldPath, fp.newPath, fp.before, fp.after, pw.from, pw.to, pw.opts)
		if err != nil {
			return err
		}
		if !ct.binary && !ct.tooLarge {
			a, b = splitLines(ct.before), splitLines(ct.after)
			groups = groupedOpCodes(a, b, pw.opts.Context)
		}
	}
	meta := header(fp, sameContent, modeChange)
	oldLabel, newLabel := labels(fp)
	if len(groups) > 0 {
		meta = append(meta, "--- "+oldLabel+tabIfSpace(fp.before, fp.oldPath), "+++ "+newLabel+tabIfSpace(fp.after, fp.newPath))
	}
	for _, m := range meta {
		w.WriteString(pw.pal.meta + m + pw.pal.end(pw.pal.meta) + "\n")
	}
	if ct.binary || ct.tooLarge {
		w.WriteString("Binary files " + oldLabel + " and " + newLabel + " differ\n")
	}
	writeHunks(w, a, b, groups, pw.pal)
	return nil
}

// header returns the extended header lines of a section, from `diff --git`
// to the index line.
func header(fp filePatch, sameContent, modeChange bool) []string {
	meta := []string{"diff --git " + QuotePath("a/"+fp.oldPath) + " " + QuotePath("b/"+fp.newPath)}
	if modeChange {
		meta = append(meta, "old mode "+gitMode(fp.before), "new mode "+gitMode(fp.after))
	}
	if fp.before == nil {
		meta = append(meta, "new file mode "+gitMode(fp.after))
	}
	if fp.after == nil {
		meta = append(meta, "deleted file mode "+gitMode(fp.before))
	}
	if fp.rename {
		meta = append(meta, "similarity index 100%", "rename from "+QuotePath(fp.oldPath), "rename to "+QuotePath(fp.newPath))
	}
	if !sameContent {
		line := "index " + shortID(fp.before) + ".." + shortID(fp.after)
		if fp.before != nil && fp.after != nil && !modeChange {
			line += " " + gitMode(fp.before)
		}
		meta = append(meta, line)
	}
	return meta
}

// labels returns the names used on the ---/+++ and Binary lines.
func labels(fp filePatch) (string, string) {
	oldLabel, newLabel := "/dev/null", "/dev/null"
	if fp.before != nil {
		oldLabel = QuotePath("a/" + fp.oldPath)
	}
	if fp.after != nil {
		newLabel = QuotePath("b/" + fp.newPath)
	}
	return oldLabel, newLabel
}

// tabIfSpace returns the tab git appends to ---/+++ names containing a
// space, so that tools splitting on whitespace find the end of the name
// (never after /dev/null, the label of an absent side).
func tabIfSpace(s *Side, name string) string {
	if s != nil && strings.IndexByte(name, ' ') >= 0 {
		return "\t"
	}
	return ""
}
