package engine

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/internal/osfs"
	"github.com/ckpt/ckpt/internal/testtree"
)

// playRules opens f's engine as if the workspace's file system matched
// names by r.
func playRules(f *fixture, r osfs.NameRules) {
	f.open(Options{hooks: testHooks{probeNames: func(string) (osfs.NameRules, error) { return r, nil }}})
}

// names lists the workspace's top-level names as the file system spells them.
func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestRestoreOfClashingNamesIsAConflict restores a checkpoint made where
// names are case- (or normalization-) sensitive into a workspace whose file
// system cannot hold both: one entry is restored, the other is a name-clash
// conflict naming both, and neither is written over the other.
func TestRestoreOfClashingNamesIsAConflict(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the checkpoint needs both names in one directory, which a case-insensitive file system cannot hold")
	}
	cases := []struct {
		name        string
		rules       osfs.NameRules
		a, b, clash string // b sorts after a and clashes with it
	}{
		{"case", osfs.NameRules{FoldCase: true}, "README", "Readme", "Readme"},
		{"normalization", osfs.NameRules{Normalizes: true}, "caf\u00e9", "cafe\u0301", "caf\u00e9"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, testtree.Dir{c.a: testtree.File{Content: "A"}, c.b: testtree.File{Content: "B"}, "x": testtree.File{Content: "x1"}})
			f.save("both")
			os.Remove(filepath.Join(f.ws, c.a))
			os.Remove(filepath.Join(f.ws, c.b))
			f.write("x", "x2")
			f.save("neither")
			playRules(f, c.rules)
			res := f.restore("@1", RestoreOptions{})
			if len(res.Conflicts) != 1 || res.Conflicts[0].Path != c.clash || res.Conflicts[0].Kind != ConflictNameClash {
				t.Fatalf("conflicts = %+v, want a name clash on %q", res.Conflicts, c.clash)
			}
			kept := c.a
			if c.clash == c.a {
				kept = c.b
			}
			if got := names(t, f.ws); !slices.Equal(got, []string{kept, "x"}) {
				t.Fatalf("workspace holds %q, want %q and x", got, kept)
			}
			if f.readFile("x") != "x1" || slices.Contains(res.Written, c.clash) {
				t.Fatalf("x = %q, written %v", f.readFile("x"), res.Written)
			}
		})
	}
}

// TestRestoreKeepsTheClashingNameTheWorkspaceHolds: when the workspace
// already holds one of two clashing names, that one is kept and the other
// is the conflict, so nothing captured is removed to make room.
func TestRestoreKeepsTheClashingNameTheWorkspaceHolds(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the checkpoint needs both names in one directory, which a case-insensitive file system cannot hold")
	}
	f := newFixture(t, testtree.Dir{"README": testtree.File{Content: "A"}, "Readme": testtree.File{Content: "B"}})
	f.save("both")
	os.Remove(filepath.Join(f.ws, "README"))
	f.write("Readme", "B2")
	f.save("one")
	playRules(f, osfs.NameRules{FoldCase: true})
	res := f.restore("@1", RestoreOptions{})
	if len(res.Conflicts) != 1 || res.Conflicts[0].Path != "README" || res.Conflicts[0].Kind != ConflictNameClash {
		t.Fatalf("conflicts = %+v, want a name clash on README", res.Conflicts)
	}
	if got := names(t, f.ws); !slices.Equal(got, []string{"Readme"}) || f.readFile("Readme") != "B" {
		t.Fatalf("workspace holds %q, Readme = %q; want Readme = B", got, f.readFile("Readme"))
	}
}

// TestCaseOnlyRenameRoundTrips renames a.txt to A.txt, saves, and restores
// both checkpoints: each brings back its own spelling and content, on the
// real file system (case-insensitive under Windows) and, on Linux, also as
// a case-insensitive one would be probed.
func TestCaseOnlyRenameRoundTrips(t *testing.T) {
	probes := map[string]*osfs.NameRules{"real": nil}
	if runtime.GOOS != "windows" {
		probes["fold"] = &osfs.NameRules{FoldCase: true}
	}
	for name, rules := range probes {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, testtree.Dir{"a.txt": testtree.File{Content: "lower\r\n"}})
			if rules != nil {
				playRules(f, *rules)
			}
			f.save("lower")
			// Renamed by removing and creating: Wine's MoveFileEx cannot
			// change only the case of a name (Windows can); the walker sees
			// either as the old spelling gone and the new one present.
			if err := os.Remove(filepath.Join(f.ws, "a.txt")); err != nil {
				t.Fatal(err)
			}
			f.write("A.txt", "upper\r\n")
			if got := names(t, f.ws); !slices.Equal(got, []string{"A.txt"}) {
				t.Fatalf("after the rename the workspace holds %q", got)
			}
			if res := f.save("upper"); !res.Created {
				t.Fatal("the rename was not saved")
			}
			for _, step := range []struct{ ref, name, content string }{{"@1", "a.txt", "lower\r\n"}, {"@2", "A.txt", "upper\r\n"}, {"@1", "a.txt", "lower\r\n"}} {
				res := f.restore(step.ref, RestoreOptions{})
				if len(res.Conflicts) != 0 {
					t.Fatalf("restore %s: conflicts %+v", step.ref, res.Conflicts)
				}
				if got := names(t, f.ws); !slices.Equal(got, []string{step.name}) || f.readFile(step.name) != step.content {
					t.Fatalf("after restore %s: %q holding %q, want %s holding %q", step.ref, got, f.readFile(step.name), step.name, step.content)
				}
			}
		})
	}
}

// TestRestoreOfNamesWindowsCannotHold plays Windows's name rules on Linux:
// reserved device names, trailing dots and spaces and ':' become bad-name
// conflicts with the reason (a directory's subtree with it), everything
// else is restored; a path longer than 260 characters is restored.
func TestRestoreOfNamesWindowsCannotHold(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the checkpoint needs names Windows cannot hold")
	}
	long := strings.Repeat("d", 60) + "/" + strings.Repeat("e", 60) + "/" + strings.Repeat("f", 60) + "/" + strings.Repeat("g", 60) + "/long.txt"
	bad := []string{"CON", "aux.c", "nul.txt", "dot.", "space ", "a:b"}
	f := newFixture(t, testtree.Dir{"ok.txt": testtree.File{Content: "ok"}})
	f.save("one")
	for _, n := range bad {
		f.write(n, n)
	}
	f.write("prn/inside.txt", "in")
	f.write(long, "long\r\n")
	f.save("two")
	for _, n := range append(bad, "prn") {
		os.RemoveAll(filepath.Join(f.ws, n))
	}
	os.RemoveAll(filepath.Join(f.ws, strings.Repeat("d", 60)))
	f.open(Options{hooks: testHooks{nameProblem: osfs.WindowsNameProblem}})
	res := f.restore("@2", RestoreOptions{})
	want := append(slices.Clone(bad), "prn")
	slices.Sort(want)
	got := conflictPaths(res)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("conflicts %v, want %v", got, want)
	}
	for _, c := range res.Conflicts {
		if c.Kind != ConflictBadName || !strings.Contains(c.Reason, "Windows") {
			t.Fatalf("conflict %+v, want a bad name with its reason", c)
		}
	}
	if f.readFile(long) != "long\r\n" || f.readFile("ok.txt") != "ok" {
		t.Fatal("the rest was not restored")
	}
}

// TestLongPathRoundTrips saves and restores a file whose path is longer
// than Windows's classic 260-character limit (natively, and under Wine).
func TestLongPathRoundTrips(t *testing.T) {
	rel := filepath.Join(strings.Repeat("d", 80), strings.Repeat("e", 80), strings.Repeat("f", 80), strings.Repeat("g", 40)+".txt")
	f := newFixture(t, testtree.Dir{"a": testtree.File{Content: "a"}})
	f.write(rel, "v1\r\n")
	f.save("one")
	f.write(rel, "v2\r\n")
	f.save("two")
	if len(filepath.Join(f.ws, rel)) <= 260 {
		t.Fatalf("path %d characters long", len(filepath.Join(f.ws, rel)))
	}
	if res := f.restore("@1", RestoreOptions{}); len(res.Conflicts) != 0 || f.readFile(rel) != "v1\r\n" {
		t.Fatalf("restore: %+v, %q", res.Conflicts, f.readFile(rel))
	}
}
