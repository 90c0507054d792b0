package diffview

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// applyCases is the number of random tree pairs the apply test checks per
// tool; each costs a few milliseconds of git or patch.
const applyCases = 40

var (
	genDirs  = []string{"", "", "src/", "src/lib/", "doc/", "café/", "sp ace/"}
	genNames = []string{"a", "b.txt", "c.go", "run.sh", "ü.md", "x y", "data", "src", "doc"}
	genWords = []string{"alpha", "beta", "gamma", "delta", "", "}", "func f() {", "\treturn nil"}
)

// genContent returns random text (sometimes CRLF, without a final newline,
// empty) or, when binary is set, bytes containing a NUL.
func genContent(r *rand.Rand, binary bool) string {
	if binary {
		return fmt.Sprintf("\x00bin%d\x01", r.Intn(1000))
	}
	eol := "\n"
	if r.Intn(5) == 0 {
		eol = "\r\n"
	}
	var b strings.Builder
	for n := r.Intn(12); n > 0; n-- {
		b.WriteString(genWords[r.Intn(len(genWords))] + eol)
	}
	s := b.String()
	if r.Intn(4) == 0 {
		s = strings.TrimSuffix(s, eol) + genWords[r.Intn(4)]
	}
	return s
}

// editContent changes a few lines of s.
func editContent(r *rand.Rand, s string) string {
	ls := strings.SplitAfter(s, "\n")
	for n := 1 + r.Intn(3); n > 0; n-- {
		i := r.Intn(len(ls) + 1)
		switch r.Intn(3) {
		case 0:
			ls = append(ls[:i], append([]string{"edit " + genWords[r.Intn(len(genWords))] + "\n"}, ls[i:]...)...)
		case 1:
			if i < len(ls) {
				ls = append(ls[:i], ls[i+1:]...)
			}
		default:
			if i < len(ls) {
				ls[i] = "changed\n"
			}
		}
	}
	return strings.Join(ls, "")
}

// genOpts selects what a generated tree pair may contain.
type genOpts struct {
	binary     bool // binary files
	symlinks   bool // symlinks
	collisions bool // a file replacing a directory or the reverse
	spaces     bool // names with spaces
}

// genPut sets key (a fixture key for path p). Entries that collide with it
// (the same path, files at p's ancestors, anything under p) are removed when
// o.collisions is set; otherwise a colliding key is not added.
func genPut(fx fixture, key, val string, o genOpts) {
	p := fixturePath(key)
	for k := range fx {
		q := fixturePath(k)
		if q == p || strings.HasPrefix(q, p+"/") || strings.HasPrefix(p, q+"/") {
			if !o.collisions && q != p {
				return
			}
			delete(fx, k)
		}
	}
	fx[key] = val
}

// fixturePath strips the kind suffix from a fixture key.
func fixturePath(key string) string {
	return strings.TrimRight(key, "*@")
}

func genKey(r *rand.Rand, o genOpts) string {
	p := genDirs[r.Intn(len(genDirs))] + genNames[r.Intn(len(genNames))]
	if !o.spaces {
		p = strings.ReplaceAll(p, " ", "_")
	}
	switch r.Intn(6) {
	case 0:
		return p + "*"
	case 1:
		if o.symlinks {
			return p + "@"
		}
	}
	return p
}

func genValue(r *rand.Rand, key string, binary bool) string {
	if strings.HasSuffix(key, "@") {
		return fmt.Sprintf("target-%d", r.Intn(5))
	}
	return genContent(r, binary)
}

// genPair returns a random tree and a mutation of it.
func genPair(r *rand.Rand, o genOpts) (fixture, fixture) {
	from := fixture{}
	for n := 3 + r.Intn(10); n > 0; n-- {
		k := genKey(r, o)
		genPut(from, k, genValue(r, k, o.binary && r.Intn(4) == 0), o)
	}
	to := fixture{}
	for k, v := range from {
		to[k] = v
	}
	for n := 1 + r.Intn(6); n > 0; n-- {
		keys := sortedKeys(to)
		if len(keys) == 0 {
			break
		}
		k := keys[r.Intn(len(keys))]
		switch r.Intn(6) {
		case 0:
			delete(to, k)
		case 1, 2:
			if !strings.HasSuffix(k, "@") {
				to[k] = editContent(r, to[k])
			}
		case 3:
			v := to[k]
			delete(to, k)
			genPut(to, toggleExec(k), v, o)
		case 4:
			nk := fixturePath(genKey(r, o)) + k[len(fixturePath(k)):]
			if p, np := fixturePath(k), fixturePath(nk); !o.collisions && (strings.HasPrefix(np, p+"/") || strings.HasPrefix(p, np+"/")) {
				continue
			}
			v := to[k]
			delete(to, k)
			genPut(to, nk, v, o)
		default:
			nk := genKey(r, o)
			genPut(to, nk, genValue(r, nk, o.binary && r.Intn(3) == 0), o)
		}
	}
	return from, to
}

func toggleExec(k string) string {
	switch {
	case strings.HasSuffix(k, "@"):
		return k
	case strings.HasSuffix(k, "*"):
		return strings.TrimSuffix(k, "*")
	}
	return k + "*"
}

// writeFixture materialises fx under dir.
func writeFixture(t *testing.T, dir string, fx fixture) {
	t.Helper()
	for k, v := range fx {
		p := filepath.Join(dir, filepath.FromSlash(fixturePath(k)))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case strings.HasSuffix(k, "@"):
			err = os.Symlink(v, p)
		case strings.HasSuffix(k, "*"):
			err = os.WriteFile(p, []byte(v), 0o755)
		default:
			err = os.WriteFile(p, []byte(v), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// readFixture reads dir back into fixture form (directories and .git are
// left out: a diff does not carry empty directories).
func readFixture(t *testing.T, dir string) fixture {
	t.Helper()
	fx := fixture{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.IsDir() && d.Name() == ".git":
			return filepath.SkipDir
		case d.IsDir():
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			fx[filepath.ToSlash(rel)+"@"] = target
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if info.Mode()&0o111 != 0 {
			key += "*"
		}
		fx[key] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fx
}

// TestPatchApplies checks, over random tree pairs, that git apply turns the
// "from" tree into the "to" tree, and that patch -p1 does for pairs within
// its reach (text only, no symlinks, no file/directory swaps, no spaces in
// names: a header-only section such as a mode change is ambiguous to patch
// when the name has a space, as it is in git's own output). Binary
// changes must be reported as binary; git apply cannot apply them without
// object data, so they are excluded and copied over by hand.
func TestPatchApplies(t *testing.T) {
	requireApplyTools(t)
	r := rand.New(rand.NewSource(5))
	for i := 0; i < applyCases; i++ {
		from, to := genPair(r, genOpts{binary: i%2 == 1, symlinks: true, collisions: true, spaces: true})
		t.Run(fmt.Sprintf("git-%d", i), func(t *testing.T) { checkApply(t, from, to, "git") })
		from, to = genPair(r, genOpts{})
		t.Run(fmt.Sprintf("patch-%d", i), func(t *testing.T) { checkApply(t, from, to, "patch") })
	}
}

func checkApply(t *testing.T, from, to fixture, tool string) {
	s := newMemStore()
	changes, err := Compare(context.Background(), s, s.build(from), s.build(to), nil)
	if err != nil {
		t.Fatal(err)
	}
	var patch bytes.Buffer
	if err := WritePatch(&patch, changes, s, s, Options{}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFixture(t, dir, from)
	binaries := binaryChanges(t, s, changes, patch.String())
	for _, c := range binaries {
		if c.Before != nil {
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(c.Path))); err != nil {
				t.Fatal(err)
			}
		}
	}
	var cmd *exec.Cmd
	if tool == "git" {
		args := []string{"apply", "--whitespace=nowarn", "--allow-empty"}
		for _, c := range binaries {
			args = append(args, "--exclude="+c.Path)
		}
		cmd = exec.Command("git", append(args, "-")...)
	} else {
		cmd = exec.Command("patch", "-p1", "--batch", "--silent", "--no-backup-if-mismatch")
	}
	cmd.Dir, cmd.Stdin = dir, bytes.NewReader(patch.Bytes())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s\npatch:\n%s", tool, err, out, patch.String())
	}
	for _, c := range binaries {
		writeFixture(t, dir, subFixture(to, c.Path))
	}
	got := readFixture(t, dir)
	if !fixturesEqual(got, to) {
		t.Fatalf("%s result differs\ngot:  %q\nwant: %q\npatch:\n%s", tool, got, to, patch.String())
	}
}

// binaryChanges returns the changes whose content change is binary,
// checking that the patch says so.
func binaryChanges(t *testing.T, s *memStore, changes []Change, patch string) []Change {
	var out []Change
	for _, c := range changes {
		if c.Before != nil && c.After != nil && c.Before.ID == c.After.ID {
			continue
		}
		fj, err := Describe(c, s, s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !fj.Binary {
			continue
		}
		label := QuotePath("b/" + c.Path)
		if c.After == nil {
			label = QuotePath("a/" + c.Path)
		}
		if !binaryLine(patch, label) {
			t.Errorf("binary change %s not reported as binary:\n%s", c.Path, patch)
		}
		out = append(out, c)
	}
	return out
}

// binaryLine reports whether patch has a "Binary files" line naming label.
func binaryLine(patch, label string) bool {
	for _, l := range strings.Split(patch, "\n") {
		if strings.HasPrefix(l, "Binary files ") && strings.HasSuffix(l, " differ") && strings.Contains(l, label) {
			return true
		}
	}
	return false
}

// subFixture returns the entry of fx at path p, if any.
func subFixture(fx fixture, p string) fixture {
	sub := fixture{}
	for k, v := range fx {
		if fixturePath(k) == p {
			sub[k] = v
		}
	}
	return sub
}

func fixturesEqual(a, b fixture) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
