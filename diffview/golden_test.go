package diffview

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// lines returns n numbered lines "line 1\n" ... for long-file fixtures.
func lines(from, n int) string {
	var b strings.Builder
	for i := from; i < from+n; i++ {
		b.WriteString("line " + strconv.Itoa(i) + "\n")
	}
	return b.String()
}

type goldenCase struct {
	name     string
	from, to fixture
	opts     Options
	filters  []string
}

var goldenCases = []goldenCase{
	{name: "added", from: fixture{"keep": "k\n"}, to: fixture{
		"keep": "k\n", "new.txt": "hello\nworld\n", "empty.txt": "", "run.sh*": "#!/bin/sh\necho hi\n",
		"link@": "new.txt", "dir/sub/deep.txt": "deep\n", "emptydir/": "",
	}},
	{name: "deleted", to: fixture{"keep": "k\n"}, from: fixture{
		"keep": "k\n", "old.txt": "bye\n", "empty.txt": "", "run.sh*": "#!/bin/sh\n",
		"link@": "old.txt", "dir/sub/deep.txt": "deep\n",
	}},
	{name: "modified",
		from: fixture{"long.txt": lines(1, 40), "start.txt": "a\nb\nc\nd\ne\nf\n", "end.txt": "a\nb\nc\nd\ne\nf\n"},
		to: fixture{
			"long.txt":  lines(1, 4) + "inserted\n" + lines(5, 10) + lines(16, 14) + "changed 30\n" + lines(31, 10),
			"start.txt": "A\nb\nc\nd\ne\nf\n", "end.txt": "a\nb\nc\nd\ne\nF\ng\n",
		}},
	{name: "mode",
		from: fixture{"a.sh": "x\n", "b.sh*": "y\n", "c.txt": "z\n", "d.txt": "w\n"},
		to:   fixture{"a.sh*": "x\n", "b.sh": "y\n", "c.txt!600": "z\n", "d.txt*": "w2\n"}},
	{name: "typechange",
		from: fixture{"f2l": "was a file\n", "l2f@": "target", "d2f/x": "in dir\n", "d2f/y/z": "deeper\n", "f2d": "file\n"},
		to:   fixture{"f2l@": "somewhere", "l2f": "now a file\n", "d2f": "now a file\n", "f2d/inner": "inside\n"}},
	{name: "renamed",
		from: fixture{"a.txt": "same content\n", "b.sh": "script\n", "dir/c.txt": "moved\n", "dup1": "dup\n", "dup2": "dup\n", "lnk@": "t"},
		to:   fixture{"z.txt": "same content\n", "b2.sh*": "script\n", "other/dir/c.txt": "moved\n", "dup3": "dup\n", "dup4": "dup\n", "lnk2@": "t"}},
	{name: "noeol",
		from: fixture{"add-eol": "a\nb", "drop-eol": "a\nb\n", "change-last": "a\nb\nc", "only": "x"},
		to:   fixture{"add-eol": "a\nb\n", "drop-eol": "a\nb", "change-last": "a\nb\nC", "only": "y"}},
	{name: "crlf",
		from: fixture{"win.txt": "one\r\ntwo\r\nthree\r\n", "mixed.txt": "a\r\nb\nc\r\n"},
		to:   fixture{"win.txt": "one\r\n2\r\nthree\r\nfour", "mixed.txt": "a\nb\r\nc\r\n"}},
	{name: "binary",
		from: fixture{"t2b": "text\n", "b2t": "bin\x00ary", "bin": "\x00\x01\x02", "gone.bin": "\x00gone", "old.bin": "\x00same", "x.bin": "\x00x"},
		to:   fixture{"t2b": "now\x00binary", "b2t": "text again\n", "bin": "\x00\x01\x03\x04", "new.bin": "\x00new", "renamed.bin": "\x00same", "x.bin*": "\x00x"}},
	{name: "unicode",
		from: fixture{"café/naïve.txt": "é\n", "tab\there": "t\n", `quo"te\back`: "q\n", "with space.txt": "s\n", "日本.md": "一\n"},
		to:   fixture{"café/naïve.txt": "è\n", "tab\there": "t2\n", `quo"te\back`: "q2\n", "with space.txt": "s2\n", "日本2.md": "一\n"}},
	{name: "empty",
		from: fixture{"grow": "", "shrink": "content\n", "stay": ""},
		to:   fixture{"grow": "content\n", "shrink": "", "stay": "", "newempty": ""}},
	{name: "toolarge", opts: Options{MaxLines: 5},
		from: fixture{"big.txt": lines(1, 10), "small.txt": "a\n"},
		to:   fixture{"big.txt": lines(2, 10), "small.txt": "b\n"}},
	{name: "stat-scaling", opts: Options{StatWidth: 60},
		from: fixture{"short": lines(1, 30), "a/very/long/path/name/that/does/not/fit/in/the/column/file.txt": "x\n"},
		to:   fixture{"short": lines(300, 25), "a/very/long/path/name/that/does/not/fit/in/the/column/file.txt": "y\n"}},
	{name: "filtered", filters: []string{"keep/", "one.txt"},
		from: fixture{"keep/a": "1\n", "keep/sub/b": "2\n", "one.txt": "1\n", "one.txt2": "x\n", "keepx/c": "3\n"},
		to:   fixture{"keep/a": "1b\n", "keep/sub/b": "2b\n", "one.txt": "1b\n", "one.txt2": "y\n", "keepx/c": "3b\n"}},
	{name: "color", opts: Options{Color: true},
		from: fixture{"f.txt": "a\nb\nc\n", "gone": "x\n"},
		to:   fixture{"f.txt": "a\nB\nc\n", "new": "y\n"}},
}

func TestGolden(t *testing.T) {
	for _, gc := range goldenCases {
		t.Run(gc.name, func(t *testing.T) {
			s := newMemStore()
			from, to := s.build(gc.from), s.build(gc.to)
			changes, err := Compare(context.Background(), s, from, to, gc.filters)
			if err != nil {
				t.Fatal(err)
			}
			var patch, stat, names, js bytes.Buffer
			if err := WritePatch(&patch, changes, s, s, gc.opts); err != nil {
				t.Fatal(err)
			}
			if err := WriteStat(&stat, changes, s, s, gc.opts); err != nil {
				t.Fatal(err)
			}
			if err := WriteNameStatus(&names, changes); err != nil {
				t.Fatal(err)
			}
			type described struct {
				Path, OldPath string
				Status        Status
				Sizes         [2]int64 // before, after
				Contents
			}
			var files []described
			for _, c := range changes {
				fj, err := Describe(c, s, s, gc.opts)
				if err != nil {
					t.Fatal(err)
				}
				d := described{Path: c.Path, OldPath: c.OldPath, Status: c.Status, Contents: fj}
				for i, side := range []*Side{c.Before, c.After} {
					if side != nil {
						d.Sizes[i] = side.Size
					}
				}
				files = append(files, d)
			}
			enc := json.NewEncoder(&js)
			enc.SetIndent("", "  ")
			if err := enc.Encode(files); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, gc.name+".patch", patch.Bytes())
			checkGolden(t, gc.name+".stat", stat.Bytes())
			checkGolden(t, gc.name+".names", names.Bytes())
			checkGolden(t, gc.name+".json", js.Bytes())
		})
	}
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if want, ok := golden.Match(t, path, got, *update); !ok {
		t.Errorf("%s differs from golden file:\n--- got ---\n%s\n--- want ---\n%s", name, got, want)
	}
}
