//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ckpt/ckpt/walker"
)

// shadowGit runs the checkpoint flow of Cline and Roo Code: a git directory
// outside the workspace with core.worktree pointing at it, the Cline
// exclusion list in info/exclude, save = `git add . --ignore-errors` +
// `git commit --allow-empty --no-verify`, restore = `git clean -f -d` +
// `git reset --hard REF`, diff = `git diff --name-only` + `git show` of each
// side of each file. Git is isolated from the user's configuration
// (GIT_CONFIG_NOSYSTEM, a private HOME) and runs no hooks.
//
// Cline renames nested .git directories away around each `git add`; the
// corpus's nested repositories have a .git that git does not take for a
// repository (no objects), so git captures their files without the renaming,
// and the renaming's cost is not counted. Automatic gc is off (gc.auto=0): a
// detached gc would otherwise run during the next system's measurements.
type shadowGit struct {
	sp     *spawner
	ws     string
	gitDir string
	env    []string
}

func newShadowGit(sp *spawner, ws, dir, home string) *shadowGit {
	env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+home, "XDG_CONFIG_HOME="+home,
		"GIT_CONFIG_GLOBAL="+filepath.Join(home, ".gitconfig"), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	return &shadowGit{sp: sp, ws: ws, gitDir: filepath.Join(dir, ".git"), env: env}
}

func (g *shadowGit) name() string     { return "git" }
func (g *shadowGit) storeDir() string { return g.gitDir }
func (g *shadowGit) reset() error     { return os.RemoveAll(filepath.Dir(g.gitDir)) }

// run runs one git command against the shadow repository and adds it to s.
func (g *shadowGit) run(ctx context.Context, s *step, args ...string) ([]byte, error) {
	full := append([]string{"--git-dir=" + g.gitDir, "--work-tree=" + g.ws}, args...)
	r, err := g.sp.run(ctx, g.ws, g.env, "git", full...)
	s.add(r)
	return r.Stdout, err
}

// init creates the shadow repository as Cline does, commands timed into s.
func (g *shadowGit) init(ctx context.Context, s *step) error {
	if err := os.MkdirAll(filepath.Dir(g.gitDir), 0o700); err != nil {
		return err
	}
	r, err := g.sp.run(ctx, g.ws, g.env, "git", "init", "-q", "--template=", filepath.Dir(g.gitDir))
	s.add(r)
	if err != nil {
		return err
	}
	configs := [][2]string{
		{"core.worktree", g.ws}, {"commit.gpgsign", "false"}, {"user.name", "ckpt bench"},
		{"user.email", "bench@ckpt.invalid"}, {"core.quotepath", "off"}, {"core.hooksPath", os.DevNull},
		{"gc.auto", "0"},
	}
	for _, c := range configs {
		if _, err := g.run(ctx, s, "config", c[0], c[1]); err != nil {
			return err
		}
	}
	pats, err := walker.ProfilePatterns("cline")
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	for _, p := range pats {
		buf.WriteString(p.String())
		buf.WriteByte('\n')
	}
	if err := os.MkdirAll(filepath.Join(g.gitDir, "info"), 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(g.gitDir, "info", "exclude"), buf.Bytes(), 0o600)
}

// save stages everything and commits, initialising the repository first
// when it does not exist (the first save of Cline includes its init).
func (g *shadowGit) save(ctx context.Context, msg string) (step, error) {
	var s step
	if _, err := os.Stat(g.gitDir); os.IsNotExist(err) {
		if err := g.init(ctx, &s); err != nil {
			return s, err
		}
	}
	if _, err := g.run(ctx, &s, "add", ".", "--ignore-errors"); err != nil {
		return s, err
	}
	if _, err := g.run(ctx, &s, "commit", "-q", "-m", msg, "--allow-empty", "--no-verify"); err != nil {
		return s, err
	}
	out, err := g.run(ctx, &s, "rev-parse", "HEAD")
	s.ID = strings.TrimSpace(string(out))
	return s, err
}

// restore cleans untracked files and hard-resets to ref.
func (g *shadowGit) restore(ctx context.Context, ref string) (step, error) {
	s := step{Written: -1, Deleted: -1}
	if _, err := g.run(ctx, &s, "clean", "-f", "-d"); err != nil {
		return s, err
	}
	_, err := g.run(ctx, &s, "reset", "-q", "--hard", ref)
	return s, err
}

// diff lists the changed files and reads both sides of each, one `git show`
// per side as the hosts do; a side that does not exist fails and is skipped.
func (g *shadowGit) diff(ctx context.Context, from, to string) (step, error) {
	var s step
	out, err := g.run(ctx, &s, "diff", "--name-only", from, to)
	if err != nil {
		return s, err
	}
	return s, g.showSides(ctx, &s, lines(out), []string{from}, []string{to})
}

// showSides reads each path at every revision of before and of after
// (the first that holds it, on each side), one `git show` per try.
func (g *shadowGit) showSides(ctx context.Context, s *step, paths []string, before, after []string) error {
	for _, p := range paths {
		s.Files++
		for _, revs := range [][]string{before, after} {
			for _, rev := range revs {
				r, err := g.sp.runDiscard(ctx, g.ws, g.env, "git", "--git-dir="+g.gitDir, "--work-tree="+g.ws, "show", rev+":"+p)
				s.add(r)
				if err == nil {
					break
				}
				if ctx.Err() != nil {
					return err
				}
			}
		}
	}
	return nil
}

// lines splits command output into its non-empty lines.
func lines(out []byte) []string {
	var l []string
	for _, p := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if p != "" {
			l = append(l, p)
		}
	}
	return l
}

// untimed runs a git command directly, outside the measurements.
func (g *shadowGit) untimed(ctx context.Context, args ...string) ([]byte, error) {
	full := append([]string{"--git-dir=" + g.gitDir, "--work-tree=" + g.ws}, args...)
	r, err := runProc(ctx, g.ws, g.env, "git", full...)
	return r.Stdout, err
}

// gc runs `git gc` (untimed; for the store-size comparison after compaction).
func (g *shadowGit) gc(ctx context.Context) error {
	_, err := g.untimed(ctx, "gc", "-q")
	return err
}

// fileCount returns the number of files in HEAD's tree.
func (g *shadowGit) fileCount(ctx context.Context) (int, error) {
	out, err := g.untimed(ctx, "ls-tree", "-r", "--name-only", "HEAD")
	if err != nil {
		return 0, fmt.Errorf("git ls-tree: %w", err)
	}
	return bytes.Count(out, []byte{'\n'}), nil
}
