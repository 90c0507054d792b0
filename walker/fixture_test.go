package walker

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// tree is a declarative workspace fixture: path → content. A path ending
// in "/" is an empty directory; a content starting with "->" makes a
// symlink to the rest.
type tree map[string]string

func (tr tree) write(t testing.TB, root string) {
	t.Helper()
	for _, content := range tr {
		if strings.HasPrefix(content, "->") && !symlinksWork(t) {
			t.Skip("this system cannot create symlinks (Windows without the privilege or developer mode; " +
				"Wine 8, whose CreateSymbolicLinkW reports success and creates nothing)")
		}
	}
	if err := tr.create(root); err != nil {
		t.Fatal(err)
	}
}

// create writes the fixture below root.
func (tr tree) create(root string) error {
	for p, content := range tr {
		full := filepath.Join(root, filepath.FromSlash(p))
		dir := filepath.Dir(full)
		if strings.HasSuffix(p, "/") {
			dir = full
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if strings.HasSuffix(p, "/") {
			continue
		}
		var err error
		if target, ok := strings.CutPrefix(content, "->"); ok {
			err = os.Symlink(target, full)
		} else {
			err = os.WriteFile(full, []byte(content), 0o644)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// walkResult is what a walk produced, flattened.
type walkResult struct {
	files   []string // file and symlink paths, sorted
	dirs    []string // directory paths (root excluded), sorted
	entries map[string]Entry
	skipped []Skipped
}

// walkAll walks root and flattens every visited directory.
func walkAll(t testing.TB, ctx context.Context, root string, opts Options) (walkResult, error) {
	t.Helper()
	var mu sync.Mutex
	res := walkResult{entries: map[string]Entry{}}
	_, skipped, err := Walk(ctx, root, opts, func(_ context.Context, d *Dir, sub map[string]int) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, e := range d.Entries {
			p := join(d.Path, e.Name)
			res.entries[p] = e
			if e.Kind == KindDir {
				res.dirs = append(res.dirs, p)
				n += sub[e.Name]
			} else {
				res.files = append(res.files, p)
				n++
			}
		}
		return n, nil
	})
	slices.Sort(res.files)
	slices.Sort(res.dirs)
	res.skipped = skipped
	return res, err
}

// gitEnv isolates git from the machine's and user's configuration.
func gitEnv(t testing.TB) []string {
	home := t.TempDir()
	env := []string{"GIT_CONFIG_NOSYSTEM=1", "HOME=" + home, "XDG_CONFIG_HOME=" + home,
		"GIT_CONFIG_GLOBAL=" + filepath.Join(home, "gitconfig"), "PATH=" + os.Getenv("PATH"), "LC_ALL=C"}
	return env
}

// git runs git in dir and returns its stdout.
func git(t testing.TB, env []string, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, stderr.String())
	}
	return out
}

// gitUntracked lists, with git as the oracle, the untracked files of the
// repository at dir that the standard exclusions (plus extra --exclude
// patterns) do not ignore.
func gitUntracked(t testing.TB, env []string, dir string, extra ...string) []string {
	args := []string{"-c", "core.excludesFile=", "ls-files", "-z", "-o", "--exclude-standard"}
	for _, x := range extra {
		args = append(args, "--exclude="+x)
	}
	out := git(t, env, dir, args...)
	var files []string
	for f := range strings.SplitSeq(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	slices.Sort(files)
	return files
}

// symlinksWork reports whether a symlink created here reads back.
func symlinksWork(t testing.TB) bool {
	l := filepath.Join(t.TempDir(), "l")
	if err := os.Symlink("target", l); err != nil {
		return false
	}
	target, err := os.Readlink(l)
	return err == nil && target == "target"
}
