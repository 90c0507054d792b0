package walker

import (
	"bufio"
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite "+recordedAnswers+" from git")

// recordedAnswers holds git's answer for every conformance case, recorded
// on Linux: per case a line `case "name"`, then one quoted path per line.
const recordedAnswers = "testdata/git-untracked.txt"

// oracle answers, for each conformance case, which files git includes:
// git itself where it is installed, else the recording.
type oracle struct {
	git      bool
	env      []string
	symlinks bool
	recorded []recordedCase // the recording, when git is missing
	answers  []recordedCase // git's answers, by case index
	skip     map[int]bool   // cases this filesystem cannot hold
}

type recordedCase struct {
	name  string
	files []string
}

func newOracle(t *testing.T) *oracle {
	o := &oracle{symlinks: symlinksWork(t), skip: map[int]bool{}}
	if _, err := exec.LookPath("git"); err == nil {
		o.git, o.env = true, gitEnv(t)
		return o
	}
	if *update {
		t.Fatal("-update needs git")
	}
	o.recorded = readRecorded(t)
	return o
}

// init makes dir a repository root: git init, or, without git, the
// .git/info directory the walker reads info/exclude from.
func (o *oracle) init(t *testing.T, dir string) {
	if o.git {
		git(t, o.env, dir, "init", "-q")
		return
	}
	if err := os.MkdirAll(filepath.Join(dir, ".git", "info"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// portable returns case i without the files this system cannot create
// (symlinks where they cannot be made; on Windows, names Windows rejects).
// Dropping a file changes no other file's answer; a case that would lose a
// pattern file or whose names collide case-insensitively is skipped.
func (o *oracle) portable(i int, c ignoreCase) ignoreCase {
	windows := runtime.GOOS == "windows"
	kept := tree{}
	folded := map[string]string{}
	for p, content := range c.files {
		ok := (o.symlinks || !strings.HasPrefix(content, "->")) && (!windows || windowsName(p))
		if !ok {
			if isPatternFile(p) {
				o.skip[i] = true
			}
			continue
		}
		kept[p] = content
		if windows {
			for prefix := range pathPrefixes(strings.TrimSuffix(p, "/")) {
				if other, seen := folded[strings.ToLower(prefix)]; seen && other != prefix {
					o.skip[i] = true
				}
				folded[strings.ToLower(prefix)] = prefix
			}
		}
	}
	c.files = kept
	return c
}

// answer returns git's included files for case i: fromGit when git ran
// (recording it), else the recording restricted to the files c holds.
func (o *oracle) answer(t *testing.T, i int, c ignoreCase, fromGit []string) []string {
	if o.git {
		for len(o.answers) <= i {
			o.answers = append(o.answers, recordedCase{})
		}
		o.answers[i] = recordedCase{c.name, slices.Clone(fromGit)}
		return fromGit
	}
	if i >= len(o.recorded) || o.recorded[i].name != c.name {
		t.Fatalf("conformance cases changed since %s was recorded: rerun with git and -update", recordedAnswers)
	}
	var want []string
	for _, f := range o.recorded[i].files {
		if _, ok := c.files[f]; ok {
			want = append(want, f)
		}
	}
	return want
}

// finish writes the recording (-update) or checks that it is current.
func (o *oracle) finish(t *testing.T, cases []ignoreCase) {
	if !o.git {
		return
	}
	var buf bytes.Buffer
	for i, c := range cases {
		buf.WriteString("case " + strconv.Quote(c.name) + "\n")
		if i < len(o.answers) {
			for _, f := range o.answers[i].files {
				buf.WriteString(strconv.Quote(f) + "\n")
			}
		}
	}
	if *update {
		if err := os.WriteFile(recordedAnswers, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if old, err := os.ReadFile(recordedAnswers); err != nil || !bytes.Equal(old, buf.Bytes()) {
		t.Errorf("%s is missing or stale (%v): rerun with -update", recordedAnswers, err)
	}
}

func readRecorded(t *testing.T) []recordedCase {
	data, err := os.ReadFile(recordedAnswers)
	if err != nil {
		t.Fatal(err)
	}
	var out []recordedCase
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		name, isCase := strings.CutPrefix(line, "case ")
		s, err := strconv.Unquote(name)
		if err != nil {
			t.Fatalf("%s: bad line %q", recordedAnswers, line)
		}
		if isCase {
			out = append(out, recordedCase{name: s})
		} else if len(out) > 0 {
			out[len(out)-1].files = append(out[len(out)-1].files, s)
		}
	}
	return out
}

func isPatternFile(p string) bool {
	switch filepath.Base(p) {
	case ".gitignore", ".ckptignore", ".gitattributes":
		return true
	}
	return false
}

// pathPrefixes yields every leading path of p, p included.
func pathPrefixes(p string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for i := range len(p) {
			if p[i] == '/' && !yield(p[:i]) {
				return
			}
		}
		yield(p)
	}
}

// windowsName reports whether every component of the slash-separated
// path p can be a Windows file name: valid UTF-8, no control characters,
// none of <>:"\|?*, no trailing dot or space, no reserved device name.
func windowsName(p string) bool {
	for c := range strings.SplitSeq(strings.TrimSuffix(p, "/"), "/") {
		if !utf8.ValidString(c) || strings.ContainsAny(c, `<>:"\|?*`) ||
			strings.HasSuffix(c, " ") || strings.HasSuffix(c, ".") {
			return false
		}
		for _, r := range c {
			if r < 0x20 {
				return false
			}
		}
		base, _, _ := strings.Cut(c, ".")
		switch u := strings.ToUpper(strings.TrimRight(base, " ")); {
		case u == "CON" || u == "PRN" || u == "AUX" || u == "NUL":
			return false
		case len(u) == 4 && (u[:3] == "COM" || u[:3] == "LPT") && u[3] >= '1' && u[3] <= '9':
			return false
		}
	}
	return true
}
