//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// stashFlow runs the checkpoint flow Cline's SDK adopted in place of its
// shadow repository: checkpoints are stash-shaped commits written into the
// user's own repository, so it needs the workspace to be a git repository
// (here: one with the whole corpus committed, set up untimed, with the
// Cline exclusion list in info/exclude as the shadow repository has).
//
// A checkpoint is `git status` (is there anything to keep?), `git stash
// create` for the tracked changes, the untracked files added to a
// temporary index and committed with commit-tree as the stash's third
// parent (the shape `git stash -u` makes), and `update-ref
// refs/cline/checkpoints/…`; with nothing changed the checkpoint is HEAD.
// A restore is `git clean -fd` + `git reset --hard` + `git stash apply`.
// Diffs read both sides with `git show`, as the shadow repository's do.
type stashFlow struct {
	*shadowGit
	runs int
}

func newStashFlow(sp *spawner, ws, home string) *stashFlow {
	g := newShadowGit(sp, ws, ws, home)
	return &stashFlow{shadowGit: g}
}

func (f *stashFlow) name() string { return "stash" }

// reset makes the workspace a repository with everything committed (once,
// untimed) and forgets the checkpoints of an earlier repetition.
func (f *stashFlow) reset() error {
	ctx := context.Background()
	if _, err := os.Stat(f.gitDir); os.IsNotExist(err) {
		var untimed step
		if err := f.init(ctx, &untimed); err != nil {
			return err
		}
		for _, args := range [][]string{{"add", "-A"}, {"commit", "-q", "--no-verify", "-m", "base"}} {
			if _, err := f.untimed(ctx, args...); err != nil {
				return fmt.Errorf("git %s: %w", args[0], err)
			}
		}
	}
	f.runs = 0
	out, err := f.untimed(ctx, "for-each-ref", "--format=%(refname)", "refs/cline/")
	for _, ref := range strings.Fields(string(out)) {
		if err == nil {
			_, err = f.untimed(ctx, "update-ref", "-d", ref)
		}
	}
	return err
}

// save takes one checkpoint the way the SDK does after a user turn.
func (f *stashFlow) save(ctx context.Context, msg string) (step, error) {
	var s step
	status, err := f.run(ctx, &s, "status", "--porcelain", "-z", "--untracked-files=all")
	if err != nil {
		return s, err
	}
	head, err := f.run(ctx, &s, "rev-parse", "HEAD")
	if err != nil {
		return s, err
	}
	s.ID = strings.TrimSpace(string(head))
	if len(status) > 0 {
		if s.ID, err = f.stashCommit(ctx, &s, s.ID, msg, untrackedPaths(status)); err != nil {
			return s, err
		}
	}
	f.runs++
	_, err = f.run(ctx, &s, "update-ref", fmt.Sprintf("refs/cline/checkpoints/bench/%d", f.runs), s.ID)
	return s, err
}

// stashCommit writes the stash-shaped commit of the workspace's changes.
func (f *stashFlow) stashCommit(ctx context.Context, s *step, head, msg string, untracked []string) (string, error) {
	out, err := f.run(ctx, s, "stash", "create", msg)
	if err != nil {
		return "", err
	}
	stash := strings.TrimSpace(string(out))
	if len(untracked) == 0 {
		return stash, nil
	}
	if stash == "" { // only untracked files: the work tree and index are HEAD's
		tree := head + "^{tree}"
		idx, err := f.run(ctx, s, "commit-tree", tree, "-p", head, "-m", "index")
		if err != nil {
			return "", err
		}
		if out, err = f.run(ctx, s, "commit-tree", tree, "-p", head, "-p", strings.TrimSpace(string(idx)), "-m", msg); err != nil {
			return "", err
		}
		stash = strings.TrimSpace(string(out))
	}
	utree, err := f.untrackedTree(ctx, s, untracked)
	if err != nil {
		return "", err
	}
	ucommit, err := f.run(ctx, s, "commit-tree", utree, "-m", "untracked files")
	if err != nil {
		return "", err
	}
	out, err = f.run(ctx, s, "commit-tree", stash+"^{tree}", "-p", head, "-p", stash+"^2", "-p", strings.TrimSpace(string(ucommit)), "-m", msg)
	return strings.TrimSpace(string(out)), err
}

// untrackedTree adds the untracked files to a temporary index and writes
// its tree.
func (f *stashFlow) untrackedTree(ctx context.Context, s *step, paths []string) (string, error) {
	idx := filepath.Join(f.gitDir, "ckpt-bench-untracked-index")
	defer os.Remove(idx)
	env := append(f.env[:len(f.env):len(f.env)], "GIT_INDEX_FILE="+idx)
	args := append([]string{"--git-dir=" + f.gitDir, "--work-tree=" + f.ws, "add", "--"}, paths...)
	r, err := f.sp.run(ctx, f.ws, env, "git", args...)
	s.add(r)
	if err != nil {
		return "", err
	}
	r, err = f.sp.run(ctx, f.ws, env, "git", "--git-dir="+f.gitDir, "--work-tree="+f.ws, "write-tree")
	s.add(r)
	return strings.TrimSpace(string(r.Stdout)), err
}

// restore puts the workspace back to HEAD (the shadow flow's clean and
// hard reset), then applies the checkpoint.
func (f *stashFlow) restore(ctx context.Context, ref string) (step, error) {
	s, err := f.shadowGit.restore(ctx, "HEAD")
	if err != nil {
		return s, err
	}
	head, err := f.run(ctx, &s, "rev-parse", "HEAD")
	if err != nil || strings.TrimSpace(string(head)) == ref {
		return s, err
	}
	_, err = f.run(ctx, &s, "stash", "apply", "-q", ref)
	return s, err
}

// diff lists the files that differ between two checkpoints, the
// untracked files of their third parents included, and reads both sides.
func (f *stashFlow) diff(ctx context.Context, from, to string) (step, error) {
	var s step
	out, err := f.run(ctx, &s, "diff", "--name-only", from, to)
	if err != nil {
		return s, err
	}
	paths := lines(out)
	fromU, toU := f.untrackedParent(ctx, &s, from), f.untrackedParent(ctx, &s, to)
	switch {
	case fromU && toU:
		out, err = f.run(ctx, &s, "diff", "--name-only", from+"^3", to+"^3")
	case toU || fromU:
		side := to
		if fromU {
			side = from
		}
		out, err = f.run(ctx, &s, "ls-tree", "-r", "--name-only", side+"^3")
	default:
		out = nil
	}
	if err != nil {
		return s, err
	}
	paths = append(paths, lines(out)...)
	return s, f.showSides(ctx, &s, paths, []string{from, from + "^3"}, []string{to, to + "^3"})
}

// untrackedParent reports whether checkpoint rev has the third parent that
// holds untracked files.
func (f *stashFlow) untrackedParent(ctx context.Context, s *step, rev string) bool {
	_, err := f.run(ctx, s, "rev-parse", "-q", "--verify", rev+"^3")
	return err == nil
}

// untrackedPaths picks the untracked entries ("?? path") of a
// `git status --porcelain -z` listing.
func untrackedPaths(status []byte) []string {
	var out []string
	for _, e := range strings.Split(string(status), "\x00") {
		if p, ok := strings.CutPrefix(e, "?? "); ok {
			out = append(out, p)
		}
	}
	return out
}
