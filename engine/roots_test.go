package engine

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/ckpt/ckpt/internal/testbound"
	"github.com/ckpt/ckpt/internal/testtree"
)

// newRootsFixture writes tree into a temporary directory whose top-level
// directories are the roots of a multi-root workspace (named by their
// directories' names), so that f.read() shows the workspace as its
// checkpoints name it: "ROOT/...".
func newRootsFixture(t *testing.T, tree testtree.Dir) *fixture {
	t.Helper()
	f := &fixture{t: t, ws: t.TempDir(), store: filepath.Join(t.TempDir(), "store")}
	if err := testtree.Write(f.ws, tree); err != nil {
		t.Fatal(err)
	}
	ageTree(t, f.ws) // no file racily clean: a save with nothing changed then reads none
	for _, name := range slices.Sorted(maps.Keys(tree)) {
		f.roots = append(f.roots, Root{Dir: filepath.Join(f.ws, name)})
	}
	f.open(Options{})
	return f
}

// rootTree is a root with an ignore file of its own, an ignored file and
// a nested repository's .git, which no save captures.
func rootTree(content string) testtree.Dir {
	return testtree.Dir{
		".gitignore": testtree.File{Content: "*.log\n"},
		"main.txt":   testtree.File{Content: content},
		"debug.log":  testtree.File{Content: "ignored in this root\n"},
		"src":        testtree.Dir{"lib.txt": testtree.File{Content: content + " lib\n"}},
		".git":       testtree.Dir{"HEAD": testtree.File{Content: "ref: refs/heads/main\n"}},
	}
}

func threeRoots() testtree.Dir {
	return testtree.Dir{"alpha": rootTree("a1\n"), "beta": rootTree("b1\n"), "gamma": rootTree("g1\n")}
}

func changedPaths(d *DiffResult) []string {
	var out []string
	for _, c := range d.Changes {
		out = append(out, c.Path)
	}
	slices.Sort(out)
	return out
}

// TestRootsSaveDiffRestoreExport: one checkpoint over three roots, each
// under its name with its own ignore rules; a diff names paths ROOT/...
// with their real absolute paths; a root filter narrows diff, history
// and export; a restore rewinds every root; a save with nothing changed
// reads no file.
func TestRootsSaveDiffRestoreExport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newRootsFixture(t, threeRoots())
	if got := f.e.Roots(); len(got) != 3 || got[0].Name != "alpha" || got[2].Dir != filepath.Join(f.ws, "gamma") {
		t.Fatalf("roots %+v", got)
	}
	one := f.save("one")
	if one.Stats.Files != 9 { // three roots × .gitignore, main.txt, src/lib.txt
		t.Fatalf("first save captured %d files, want 9", one.Stats.Files)
	}
	top, err := f.e.Ls(ctx, "", "HEAD", "")
	if err != nil || len(top) != 3 || top[1].Name != "beta" {
		t.Fatalf("ls of the top: %+v, %v", top, err)
	}
	if again := f.save("again"); again.Created || again.Stats.BytesHashed != 0 {
		t.Fatalf("an unchanged save created %v, hashed %d bytes", again.Created, again.Stats.BytesHashed)
	}
	want := f.read()
	f.write("alpha/main.txt", "a2\n")
	f.write("gamma/src/new.txt", "new\n")
	f.write("beta/more.log", "ignored\n")

	d, err := f.e.Diff(ctx, "HEAD", WorkspaceRef, DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := changedPaths(d); !slices.Equal(got, []string{"alpha/main.txt", "gamma/src/new.txt"}) {
		t.Fatalf("workspace diff %v", got)
	}
	files, err := d.Files(DiffFormat{})
	if err != nil || files[0].Absolute != filepath.Join(f.ws, "alpha", "main.txt") || *files[0].After != "a2\n" {
		t.Fatalf("diff files %+v, %v", files, err)
	}
	d, err = f.e.Diff(ctx, "HEAD", WorkspaceRef, DiffOptions{Paths: []string{"gamma"}})
	if err != nil || !slices.Equal(changedPaths(d), []string{"gamma/src/new.txt"}) {
		t.Fatalf("diff of root gamma: %v, %v", changedPaths(d), err)
	}
	two := f.save("two")

	h, err := f.e.History(ctx, HistoryOptions{Paths: []string{"alpha"}})
	if err != nil || len(h.Entries) != 2 || h.Entries[0].Checkpoint.ID != two.ID {
		t.Fatalf("history of root alpha: %+v, %v", h, err)
	}
	out := filepath.Join(t.TempDir(), "export")
	if _, err := f.e.Export(ctx, "@1", out, ExportOptions{Paths: []string{"beta"}}); err != nil {
		t.Fatal(err)
	}
	exported, err := testtree.Read(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := exported["beta/main.txt"]; !ok || len(exported) != 5 { // beta, its .gitignore, main.txt, src, src/lib.txt
		t.Fatalf("export of root beta: %v", exported)
	}

	res := f.restore("@1", RestoreOptions{})
	if len(res.Conflicts) != 0 {
		t.Fatalf("conflicts %v", res.Conflicts)
	}
	want["beta/more.log"] = f.read()["beta/more.log"] // ignored: left alone
	assertSameTree(t, want, f.read())
}

// TestRootsFilters: a save of one root keeps the other roots as the head
// holds them; a restore of one root rewinds it alone; a name that is not
// a root is refused.
func TestRootsFilters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newRootsFixture(t, threeRoots())
	f.save("one")
	f.write("alpha/main.txt", "a2\n")
	f.write("beta/main.txt", "b2\n")
	res, err := f.e.Save(ctx, SaveOptions{Message: "alpha only", Roots: []string{"alpha"}})
	if err != nil || !res.Created || res.Stats.Modified != 1 || res.Stats.Files != 9 {
		t.Fatalf("save of root alpha: %+v, %v", res, err)
	}
	if got := f.catHead("beta/main.txt"); got != "b1\n" {
		t.Fatalf("root beta, left out of the save, holds %q", got)
	}
	all := f.save("all")
	if all.Stats.Modified != 1 || f.catHead("beta/main.txt") != "b2\n" {
		t.Fatalf("full save after a filtered one: %+v", all.Stats)
	}

	r := f.restore("@1", RestoreOptions{Paths: []string{"beta"}})
	if !slices.Equal(r.Written, []string{"beta/main.txt"}) {
		t.Fatalf("restore of root beta wrote %v", r.Written)
	}
	if f.readFile("beta/main.txt") != "b1\n" || f.readFile("alpha/main.txt") != "a2\n" {
		t.Fatal("a restore of root beta changed another root, or not beta")
	}

	for _, bad := range [][]string{{"delta"}, {"alpha/src"}} {
		if _, err := f.e.Save(ctx, SaveOptions{Roots: bad}); !errors.Is(err, ErrBadRequest) {
			t.Errorf("save of roots %v: %v, want ErrBadRequest", bad, err)
		}
	}
	single := newFixture(t, testtree.Dir{"x": testtree.File{Content: "x"}})
	if _, err := single.e.Save(ctx, SaveOptions{Roots: []string{"x"}}); !errors.Is(err, ErrBadRequest) {
		t.Errorf("a root filter on a single-root workspace: %v", err)
	}
}

func (f *fixture) catHead(rel string) string {
	f.t.Helper()
	return catString(f.t, f.e, "HEAD", rel)
}

// TestRootsIdentity: the store records its set of roots; opening it with
// another set (fewer, more, renamed, or a single workspace) is a
// workspace mismatch; the same set in another order opens.
func TestRootsIdentity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newRootsFixture(t, testtree.Dir{"a": rootTree("a\n"), "b": rootTree("b\n"), "c": rootTree("c\n")})
	f.save("one")
	f.e.Close()
	f.e = nil
	a, b, c := f.roots[0], f.roots[1], f.roots[2]
	for name, roots := range map[string][]Root{
		"fewer":   {a, b},
		"more":    {a, b, c, {Dir: t.TempDir()}},
		"renamed": {a, b, {Name: "other", Dir: c.Dir}},
	} {
		_, err := Open(ctx, "", Options{StoreDir: f.store, Roots: roots})
		var mismatch *WorkspaceMismatchError
		if !errors.As(err, &mismatch) || !errors.Is(err, ErrWorkspaceMismatch) {
			t.Errorf("%s roots: %v, want a workspace mismatch", name, err)
		}
	}
	if _, err := Open(ctx, a.Dir, Options{StoreDir: f.store}); !errors.Is(err, ErrWorkspaceMismatch) {
		t.Errorf("single workspace on a multi-root store: %v", err)
	}
	e, err := Open(ctx, "", Options{StoreDir: f.store, Roots: []Root{c, b, a}})
	if err != nil {
		t.Fatalf("the same roots in another order: %v", err)
	}
	e.Close()
}

// TestRootsNames: names default to the directories' base names, made
// unique; duplicate names, overlapping directories, and a workspace given
// beside roots are refused.
func TestRootsNames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	top := t.TempDir()
	if err := testtree.Write(top, testtree.Dir{
		"x": testtree.Dir{"src": testtree.Dir{}}, "y": testtree.Dir{"src": testtree.Dir{}}, "z": testtree.Dir{},
	}); err != nil {
		t.Fatal(err)
	}
	src1, src2, z := filepath.Join(top, "x", "src"), filepath.Join(top, "y", "src"), filepath.Join(top, "z")
	store := func() string { return filepath.Join(t.TempDir(), "store") }
	e, err := Open(ctx, "", Options{StoreDir: store(), Roots: []Root{{Dir: src1}, {Dir: src2}, {Name: "src-3", Dir: z}}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var names []string
	for _, r := range e.Roots() {
		names = append(names, r.Name+"="+filepath.Base(filepath.Dir(r.Dir)))
	}
	if !slices.Equal(names, []string{"src=x", "src-2=y", "src-3=" + filepath.Base(top)}) {
		t.Fatalf("names %v", names)
	}
	for name, c := range map[string]struct {
		ws    string
		roots []Root
	}{
		"duplicate name": {"", []Root{{Name: "n", Dir: src1}, {Name: "n", Dir: z}}},
		"invalid name":   {"", []Root{{Name: "a/b", Dir: src1}}},
		"overlap":        {"", []Root{{Dir: filepath.Join(top, "x")}, {Dir: src1}}},
		"same dir":       {"", []Root{{Dir: z}, {Name: "again", Dir: z}}},
		"both":           {z, []Root{{Dir: src1}}},
	} {
		if _, err := Open(ctx, c.ws, Options{StoreDir: store(), Roots: c.roots}); !errors.Is(err, ErrBadRequest) {
			t.Errorf("%s: %v, want ErrBadRequest", name, err)
		}
	}
}

// TestRootsRestoreFaultInjection is TestRestoreFaultInjection over a
// workspace of three roots: a restore across them writes one journal, so
// a fault at any step leaves every root as it was (no journal) or the
// journal that the next writing Open completes in every root. No run may
// leave one root rewound and another not. Every rootsFaultStride-th point
// is injected, each one with the long tests (testbound.LongTests).
// rootsFaultStride spaces the points TestRootsRestoreFaultInjection
// fails without the long tests: about ten of its 140.
const rootsFaultStride = 14

func TestRootsRestoreFaultInjection(t *testing.T) {
	t.Parallel()
	tree := testtree.Dir{}
	for _, name := range []string{"alpha", "beta", "gamma"} {
		tree[name] = richTree(t)
	}
	f := newRootsFixture(t, tree)
	c := &faultCase{f: f, trees: map[ID]map[string]testtree.Entry{}}
	c.one = f.save("one").ID
	c.trees[c.one] = f.read()
	for _, name := range []string{"alpha", "beta", "gamma"} {
		mutateEverything(t, filepath.Join(f.ws, name))
	}
	c.two = f.save("two").ID
	c.trees[c.two] = f.read()
	step := testbound.Scale(rootsFaultStride, 1)
	for i := 0; ; i += step {
		if c.run(i, syscall.EIO) {
			t.Logf("no injection point at %d, every %d-th failed before it", i, step)
			if i < 100 {
				t.Fatalf("only %d injection points over three roots", i)
			}
			return
		}
	}
}

// TestRootsStoreDir: the default store of a multi-root workspace depends
// on its roots, not on their order.
func TestRootsStoreDir(t *testing.T) {
	t.Parallel()
	a, b := t.TempDir(), t.TempDir()
	one, err := DefaultRootsStoreDir([]Root{{Name: "a", Dir: a}, {Name: "b", Dir: b}})
	if err != nil {
		t.Fatal(err)
	}
	two, _ := DefaultRootsStoreDir([]Root{{Name: "b", Dir: b}, {Name: "a", Dir: a}})
	other, _ := DefaultRootsStoreDir([]Root{{Name: "a", Dir: a}})
	single, _ := DefaultStoreDir(a)
	if one != two || one == other || other == single {
		t.Fatalf("store dirs %s %s %s %s", one, two, other, single)
	}
	if _, err := os.Stat(one); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("DefaultRootsStoreDir created %s", one)
	}
}
