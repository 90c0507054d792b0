package walker

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/ckpt/ckpt/internal/testbound"
)

// TestIgnoreConformance checks the walker's included files against git's
// own answer (git ls-files -o --exclude-standard) on hand-written and
// seeded random workspaces. Where git is missing (the Windows test run),
// the answers recorded from git on Linux in testdata/git-untracked.txt are
// the oracle; with git, the recording is checked to be current, and
// -update rewrites it.
func TestIgnoreConformance(t *testing.T) {
	cases := append(handCases(), wildmatchCases()...)
	cases = append(cases, randomCases(1, 200)...)
	cases = append(cases, randomCases(2, 200)...)
	// Creating files costs 20-50x more on Windows (under Wine most of all):
	// there a short run checks every fifth random case.
	sample := 1
	if runtime.GOOS == "windows" && !testbound.LongTests() {
		sample = 5
	}
	o := newOracle(t)
	for i := range cases {
		cases[i] = o.portable(i, cases[i])
		if strings.HasPrefix(cases[i].name, "random ") && i%sample != 0 {
			o.skip[i] = true
		}
	}

	batch := t.TempDir()
	o.init(t, batch)
	var batched []int
	var g errgroup.Group
	g.SetLimit(4) // file creation dominates the test's time; overlap it
	for i, c := range cases {
		if c.batchable() && !o.skip[i] {
			g.Go(func() error { return c.files.create(filepath.Join(batch, caseDir(i))) })
			batched = append(batched, i)
		}
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	var byCase map[string][]string
	if o.git {
		byCase = map[string][]string{}
		for _, f := range gitUntracked(t, o.env, batch) {
			dir, rest, _ := strings.Cut(f, "/")
			byCase[dir] = append(byCase[dir], rest)
		}
	}
	for _, i := range batched {
		want := o.answer(t, i, cases[i], byCase[caseDir(i)])
		compareWithGit(t, cases[i], filepath.Join(batch, caseDir(i)), "none", want)
	}
	for i, c := range cases {
		if !c.batchable() && !o.skip[i] {
			checkSpecialCase(t, o, i, c)
		}
	}
	o.finish(t, cases)
	t.Logf("%d cases (%d batched in one repository), %d not representable here", len(cases), len(batched), len(o.skip))
}

func caseDir(i int) string { return fmt.Sprintf("c%04d", i) }

// checkSpecialCase runs one case in a repository of its own: the profile
// becomes the head of info/exclude, extras become --exclude patterns.
func checkSpecialCase(t *testing.T, o *oracle, i int, c ignoreCase) {
	dir := t.TempDir()
	o.init(t, dir)
	c.files.write(t, dir)
	exclude := c.exclude
	profile := c.profile
	if profile == "" {
		profile = "none"
	} else if profile != "none" {
		data, err := profileFS.ReadFile("profiles/" + profile + ".txt")
		if err != nil {
			t.Fatal(err)
		}
		exclude = string(data) + "\n" + exclude
	}
	if err := os.WriteFile(filepath.Join(dir, ".git", "info", "exclude"), []byte(exclude), 0o644); err != nil {
		t.Fatal(err)
	}
	var fromGit []string
	if o.git {
		fromGit = gitUntracked(t, o.env, dir, c.extra...)
	}
	want := o.answer(t, i, c, fromGit)
	c.files = nil
	compareWithGit(t, c, dir, profile, want)
}

func compareWithGit(t *testing.T, c ignoreCase, root, profile string, want []string) {
	t.Helper()
	res, err := walkAll(t, context.Background(), root, Options{Profile: profile, Extra: c.extra})
	if err != nil {
		t.Fatalf("%s: walk: %v", c.name, err)
	}
	slices.Sort(want)
	if !slices.Equal(res.files, want) {
		t.Errorf("%s: walker and git disagree\nonly walker: %q\nonly git:    %q\nfiles: %q",
			c.name, minus(res.files, want), minus(want, res.files), c.files)
	}
	checkMatcherAgrees(t, c.name, root, Options{Profile: profile, Extra: c.extra}, res)
}

// checkMatcherAgrees asks the Matcher about every file on disk below root
// and expects it to ignore exactly those the walk left out.
func checkMatcherAgrees(t *testing.T, name, root string, opts Options, res walkResult) {
	t.Helper()
	m, err := NewMatcher(root, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		_, included := res.entries[rel]
		if ignored := m.Ignored(rel, d.IsDir()); ignored == included && !strings.HasPrefix(rel, ".git/") {
			t.Errorf("%s: Matcher.Ignored(%q) = %v, walk included = %v", name, rel, ignored, included)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// minus returns the elements of a not in b.
func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}
