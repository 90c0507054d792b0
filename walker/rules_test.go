package walker

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

func TestCkptignoreAndLFS(t *testing.T) {
	root := t.TempDir()
	tree{
		".gitignore":       "*.log\n!keep.tmp\n",
		".ckptignore":      "*.tmp\n!*.log\nsecret/\n",
		".gitattributes":   "*.psd filter=lfs diff=lfs merge=lfs -text\n*.txt text\n\"quoted\" filter=lfs\n",
		"a/.gitignore":     "!*.tmp\n",
		"a/.gitattributes": "/big.bin filter=lfs\n# c filter=lfs\n",
		"x.log":            "x", "keep.tmp": "x", "a/y.tmp": "x", "a/big.bin": "x", "big.bin": "x",
		"art.psd": "x", "a/art.psd": "x", "notes.txt": "x", "secret/k": "x",
		"a/.ckptignore": "!y.tmp\n",
	}.write(t, root)
	res := mustWalk(t, root, Options{})
	want := []string{".ckptignore", ".gitattributes", ".gitignore", "a/.ckptignore", "a/.gitattributes",
		"a/.gitignore", "a/y.tmp", "big.bin", "notes.txt", "x.log"}
	if !slices.Equal(res.files, want) {
		t.Fatalf("files = %q\nwant    %q", res.files, want)
	}
}

func TestPrecedenceOfExtrasAndProfiles(t *testing.T) {
	root := t.TempDir()
	tree{
		".gitignore": "!node_modules/\n*.gen\n", "node_modules/m": "x", "a.gen": "x", "b.gen": "x",
		".ckptignore": "b.gen\n", "__pycache__/c": "x", "build/out": "x", ".DS_Store": "x",
	}.write(t, root)
	res := mustWalk(t, root, Options{Extra: []string{"!a.gen"}})
	want := []string{".ckptignore", ".gitignore", "a.gen", "build/out", "node_modules/m"}
	if !slices.Equal(res.files, want) {
		t.Fatalf("default profile: files = %q, want %q", res.files, want)
	}
	res = mustWalk(t, root, Options{Profile: "cline"})
	if !slices.Contains(res.files, "node_modules/m") || slices.Contains(res.files, "build/out") {
		t.Fatalf("cline profile: files = %q", res.files)
	}
	res = mustWalk(t, root, Options{Profile: "none"})
	if !slices.Contains(res.files, "__pycache__/c") || !slices.Contains(res.files, ".DS_Store") {
		t.Fatalf("none profile: files = %q", res.files)
	}
	if _, _, err := Walk(context.Background(), root, Options{Profile: "vscode"}, nopVisit); !errors.Is(err, ErrUnknownProfile) {
		t.Fatalf("unknown profile: err = %v", err)
	}
}

func TestProfilesMatchReference(t *testing.T) {
	for _, name := range []string{"cline", "roo"} {
		ref, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "reference", "excludes-"+name+".txt"))
		if err != nil {
			// The reference copies live outside the module; the embedded
			// file is then checked only for being non-trivial.
			ref = nil
		}
		emb, err := profileFS.ReadFile("profiles/" + name + ".txt")
		if err != nil {
			t.Fatal(err)
		}
		if ref != nil && string(ref) != string(emb) {
			t.Errorf("profiles/%s.txt differs from the reference list", name)
		}
		pats, err := ProfilePatterns(name)
		if err != nil || len(pats) < 100 {
			t.Errorf("%s: %d patterns, err %v", name, len(pats), err)
		}
	}
}

func nopVisit(context.Context, *Dir, map[string]int) (int, error) { return 0, nil }

func TestStoreExcluded(t *testing.T) {
	root := t.TempDir()
	tree{"src/a": "x", ".ckpt/store/packs/p": "x", "other/store-not/x": "x"}.write(t, root)
	store := filepath.Join(root, ".ckpt", "store")
	// Any spelling of the store path works: it is matched by identity.
	if err := os.Symlink(store, filepath.Join(t.TempDir(), "alias")); err != nil {
		t.Fatal(err)
	}
	res := mustWalk(t, root, Options{ExcludeDirs: []string{store, "/nonexistent/store"}})
	want := []string{"other/store-not/x", "src/a"}
	if !slices.Equal(res.files, want) || len(res.skipped) != 0 {
		t.Fatalf("files = %q skipped %v", res.files, res.skipped)
	}
	if !slices.Contains(res.dirs, ".ckpt") {
		t.Fatalf("the store's parent must stay: dirs = %q", res.dirs)
	}
	m, err := NewMatcher(root, Options{ExcludeDirs: []string{store}, Extra: []string{"!.ckpt/store/"}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if !m.Ignored(".ckpt/store/packs/p", false) || m.Ignored(".ckpt", true) || !m.Ignored("x/.git", true) {
		t.Fatal("Matcher does not exclude the store and .git like the walk")
	}
}

func TestVisitErrorStopsWalk(t *testing.T) {
	root := t.TempDir()
	tr := tree{}
	for _, d := range []string{"a", "b", "c", "d", "e"} {
		for _, s := range []string{"1", "2", "3"} {
			tr[d+"/"+s+"/f"] = "x"
		}
	}
	tr.write(t, root)
	boom := errors.New("boom")
	_, _, err := Walk(context.Background(), root, Options{Workers: 2}, func(ctx context.Context, d *Dir, _ map[string]int) (int, error) {
		if d.Path == "c/2" {
			return 0, boom
		}
		return 0, ctx.Err()
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, _, err = Walk(ctx, root, Options{}, func(context.Context, *Dir, map[string]int) (int, error) {
		cancel()
		return 0, nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestProtectedWorkspaces(t *testing.T) {
	home := t.TempDir()
	if runtime.GOOS == "windows" {
		t.Setenv("USERPROFILE", home) // what os.UserHomeDir reads there
	} else {
		t.Setenv("HOME", home)
	}
	for _, d := range []string{"Desktop", "Documents", "Downloads", "Documents/project"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	protected := []string{"/", home, filepath.Join(home, "Desktop"), filepath.Join(home, "Documents"),
		filepath.Join(home, "Downloads"), home + "/Documents/.."}
	if symlinksWork(t) {
		link := filepath.Join(t.TempDir(), "home-link")
		if err := os.Symlink(home, link); err != nil {
			t.Fatal(err)
		}
		protected = append(protected, link, filepath.Join(link, "Downloads")+"/")
	}
	for _, p := range protected {
		if err := CheckWorkspace(p); !errors.Is(err, ErrProtected) {
			t.Errorf("CheckWorkspace(%q) = %v, want ErrProtected", p, err)
		}
	}
	if _, _, err := Walk(context.Background(), home, Options{}, nopVisit); !errors.Is(err, ErrProtected) {
		t.Errorf("Walk(home) = %v, want ErrProtected", err)
	}
	for _, p := range []string{filepath.Join(home, "Documents", "project"), t.TempDir()} {
		if err := CheckWorkspace(p); err != nil {
			t.Errorf("CheckWorkspace(%q) = %v, want nil", p, err)
		}
	}
}
