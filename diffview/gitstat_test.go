package diffview

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// gitStatCases is the number of random tree pairs the stat and name-status
// comparison with git checks; each costs about ten git processes.
const gitStatCases = 30

// TestStatAndNameStatusMatchGit compares WriteStat and WriteNameStatus
// with `git diff --stat` and `--name-status` over tree pairs with binary
// files, symlinks, executables, duplicate contents and moves, git finding
// exact renames only (-M100%), as Compare pairs them. Two fixed pairs
// hold what random ones rarely do: copies of one content moved, where git
// pairs each addition with a deletion of the same base name first, and
// binary files renamed and made executable with their content kept, which
// git lists as "Bin" without sizes.
func TestStatAndNameStatusMatchGit(t *testing.T) {
	requireApplyTools(t)
	pairs := [][2]fixture{
		{{"a/x": "dup\n", "b/y": "dup\n", "c/keep": "k\n"}, {"c/y": "dup\n", "d/z": "dup\n", "c/keep": "k\n"}},
		{{"old.bin": "\x00same", "x.bin": "\x00x", "t": "1\n"}, {"renamed.bin": "\x00same", "x.bin*": "\x00x", "t": "2\n"}},
	}
	r := rand.New(rand.NewSource(11))
	for range gitStatCases {
		from, to := genPair(r, genOpts{binary: true, symlinks: true, spaces: true})
		pairs = append(pairs, [2]fixture{from, to})
	}
	for i, p := range pairs {
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkStatWithGit(t, p[0], p[1]) })
	}
}

func checkStatWithGit(t *testing.T, from, to fixture) {
	s := newMemStore()
	changes, err := Compare(context.Background(), s, s.build(from), s.build(to), nil)
	if err != nil {
		t.Fatal(err)
	}
	var stat, names bytes.Buffer
	if err := WriteStat(&stat, changes, s, s, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteNameStatus(&names, changes); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "core.autocrlf=false"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %q: %v", args, err)
		}
		return string(out)
	}
	git("init", "-q")
	writeFixture(t, dir, from)
	git("add", "-A")
	git("commit", "-q", "--allow-empty", "-m", "from")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != ".git" {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	writeFixture(t, dir, to)
	git("add", "-A")
	if want := git("diff", "--cached", "-M100%", fmt.Sprintf("--stat=%d", DefaultStatWidth)); stat.String() != want {
		t.Errorf("stat differs from git's\ngot:\n%s\ngit:\n%s", stat.String(), want)
	}
	if want := git("diff", "--cached", "-M100%", "--name-status"); names.String() != want {
		t.Errorf("name-status differs from git's\ngot:\n%s\ngit:\n%s", names.String(), want)
	}
}
