package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/internal/faultfs"
	"github.com/ckpt/ckpt/internal/testbound"
	"github.com/ckpt/ckpt/internal/testtree"
	"github.com/ckpt/ckpt/objects"
)

// age sets the mtimes of paths an hour back, so no stat-cache entry is racy.
func age(t *testing.T, paths ...string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	for _, p := range paths {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
}

// ageTree ages every file and directory under root.
func ageTree(t *testing.T, root string) {
	t.Helper()
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode()&os.ModeSymlink == 0 {
			age(t, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestSaveNoChangeCreatesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"a": testtree.File{Content: "a"}})
	first := f.save("one")
	if !first.Created || first.Seq != 1 || !first.Parent.IsZero() {
		t.Fatalf("first save = %+v", first)
	}
	again := f.save("nothing changed")
	if again.Created || again.ID != first.ID || again.Seq != 1 {
		t.Fatalf("no-change save = %+v, want the head unchanged", again)
	}
	empty, err := f.e.Save(context.Background(), SaveOptions{Message: "empty", AllowEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	if !empty.Created || !empty.Empty || empty.ID == first.ID || empty.Parent != first.ID || empty.Seq != 2 {
		t.Fatalf("allow-empty save = %+v", empty)
	}
	a, _ := f.e.Show(context.Background(), "", "@1")
	b, _ := f.e.Show(context.Background(), "", "@2")
	if a.Root != b.Root {
		t.Fatal("an empty checkpoint must share its parent's tree")
	}
}

func TestSaveReadsOnlyChangedFiles(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{
		"a.txt": testtree.File{Content: "aaaa"},
		"d":     testtree.Dir{"e": testtree.Dir{"deep.txt": testtree.File{Content: "deep"}}, "other.txt": testtree.File{Content: "o"}},
		"x":     testtree.Dir{"y.txt": testtree.File{Content: "y"}},
	})
	ageTree(t, f.ws)
	f.save("one")
	if res := f.save("again"); res.Stats.BytesHashed != 0 || res.Created {
		t.Fatalf("unchanged save hashed %d bytes (created=%v)", res.Stats.BytesHashed, res.Created)
	}
	f.write("d/e/deep.txt", "deeper")
	age(t, filepath.Join(f.ws, "d/e/deep.txt"))
	snap, err := f.e.scan(context.Background(), nil, objects.ID{})
	if err != nil {
		t.Fatal(err)
	}
	// Only the trees on the changed path are recomputed: d/e, d and the root;
	// the changed file, still while read, is opened once.
	if len(snap.Trees) != 3 || snap.Hashed.Load() != uint64(len("deeper")) || snap.Opened.Load() != 1 {
		t.Fatalf("scan recomputed %d trees, hashed %d bytes and opened %d files, want 3, %d and 1", len(snap.Trees), snap.Hashed.Load(), snap.Opened.Load(), len("deeper"))
	}
	res := f.save("two")
	if res.Stats.Modified != 1 || res.Stats.Added != 0 || res.Stats.Deleted != 0 || res.Stats.Files != 4 {
		t.Fatalf("stats = %+v", res.Stats)
	}
}

// A file rewritten with the same size inside the same timestamp tick keeps
// its size and mtime; the racy-entry rule must still catch the change.
func TestSaveCatchesRacySameSizeRewrite(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{})
	for i := 0; i < 20; i++ {
		p := filepath.Join(f.ws, "racy.txt")
		before := []byte("version-a-" + string(rune('a'+i)))
		after := []byte("version-b-" + string(rune('a'+i)))
		if err := os.WriteFile(p, before, 0o644); err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(p)
		f.save("a")
		if err := os.WriteFile(p, after, 0o644); err != nil {
			t.Fatal(err)
		}
		// Same size, same mtime: only the racy rule (or ctime) can tell.
		if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
		f.save("b")
		rc, _, err := f.e.Cat(context.Background(), "", "HEAD", "racy.txt")
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 64)
		n, _ := rc.Read(buf)
		rc.Close()
		if string(buf[:n]) != string(after) {
			t.Fatalf("round %d: checkpoint holds %q, want %q", i, buf[:n], after)
		}
	}
}

func TestTwoTasksShareContent(t *testing.T) {
	t.Parallel()
	tree := testtree.Dir{}
	for i := 0; i < 50; i++ {
		tree[strings.Repeat("f", 1+i%5)+string(rune('a'+i%26))+string(rune('0'+i/26))] = testtree.File{Content: strings.Repeat("content of a file that is long enough to matter ", 200+i)}
	}
	f := newFixture(t, tree)
	if _, err := f.e.Save(context.Background(), SaveOptions{Task: "alpha"}); err != nil {
		t.Fatal(err)
	}
	one := dirSize(t, f.store)
	res, err := f.e.Save(context.Background(), SaveOptions{Task: "beta"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Created || res.Seq != 1 {
		t.Fatalf("beta's first save = %+v", res)
	}
	packs := dirSize(t, filepath.Join(f.store, "packs"))
	if grown := dirSize(t, f.store) - one; grown > packs/10+64<<10 {
		t.Fatalf("store grew by %d bytes for identical content (packs hold %d)", grown, packs)
	}
	tasks, err := f.e.Tasks(context.Background())
	if err != nil || len(tasks) != 2 || tasks[0].Name != "alpha" || tasks[1].Name != "beta" {
		t.Fatalf("tasks = %+v, %v", tasks, err)
	}
}

func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestSaveSkipsFIFOAndReportsIt(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"a": testtree.File{Content: "a"}})
	mkfifo(t, filepath.Join(f.ws, "pipe"))
	ctx, cancel := context.WithTimeout(context.Background(), testbound.Hang)
	defer cancel()
	res, err := f.e.Save(ctx, SaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skipped) != 1 || res.Skipped[0].Path != "pipe" {
		t.Fatalf("skipped = %+v, want the fifo", res.Skipped)
	}
}

func TestNestedRepositoriesKeepTheirGitDirs(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{
		".git": testtree.Dir{"HEAD": testtree.File{Content: "ref: refs/heads/main\n"}, "config": testtree.File{Content: "[core]\n"}},
		"app":  testtree.File{Content: "app v1\n"},
		"vendor": testtree.Dir{"lib": testtree.Dir{
			".git":  testtree.Dir{"HEAD": testtree.File{Content: "nested\n"}, "objects": testtree.Dir{"ab": testtree.File{Content: "obj"}}},
			"lib.c": testtree.File{Content: "lib v1\n"},
		}},
		"sub": testtree.Dir{".git": testtree.File{Content: "gitdir: ../.git/modules/sub\n"}, "s.txt": testtree.File{Content: "s v1\n"}},
	})
	gitDirs := func() map[string]testtree.Entry {
		m, err := testtree.Read(f.ws, nil)
		if err != nil {
			t.Fatal(err)
		}
		for p := range m {
			if !strings.Contains(p, ".git") {
				delete(m, p)
			}
		}
		return m
	}
	gitBefore := gitDirs()
	f.save("one")
	entries, err := f.e.Ls(context.Background(), "", "HEAD", "vendor/lib")
	if err != nil || len(entries) != 1 || entries[0].Path != "vendor/lib/lib.c" {
		t.Fatalf("nested repo listing = %+v, %v; want only lib.c", entries, err)
	}
	f.write("vendor/lib/lib.c", "lib v2\n")
	f.write("sub/s.txt", "s v2\n")
	f.save("two")
	f.restore("@1", RestoreOptions{})
	if f.readFile("vendor/lib/lib.c") != "lib v1\n" || f.readFile("sub/s.txt") != "s v1\n" {
		t.Fatal("nested repository files not restored")
	}
	assertSameTree(t, gitBefore, gitDirs())
	if len(gitBefore) != 8 {
		t.Fatalf("fixture check: %d .git paths", len(gitBefore))
	}
}

func TestOpenRefusals(t *testing.T) {
	home := t.TempDir()
	setHome(t, home)
	if _, err := Open(context.Background(), home, Options{StoreDir: t.TempDir()}); !errors.Is(err, ErrProtected) {
		t.Fatalf("open home: %v, want ErrProtected", err)
	}
	store := filepath.Join(t.TempDir(), "store")
	a, b := t.TempDir(), t.TempDir()
	e, err := Open(context.Background(), a, Options{StoreDir: store})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(context.Background(), a, Options{StoreDir: store})
	var busy *BusyError
	if !errors.As(err, &busy) || !strings.Contains(busy.Holder, "pid ") {
		t.Fatalf("second open: %v, want a BusyError naming the holder", err)
	}
	e.Close()
	if _, err := Open(context.Background(), b, Options{StoreDir: store}); !errors.Is(err, ErrWorkspaceMismatch) {
		t.Fatalf("open another workspace's store: %v, want ErrWorkspaceMismatch", err)
	}
}

func TestSaveForgetsCachesOfVanishedDirectories(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{
		"keep": testtree.Dir{"k": testtree.File{Content: "k"}},
		"gone": testtree.Dir{"g": testtree.File{Content: "g"}, "sub": testtree.Dir{"deep": testtree.Dir{"x": testtree.File{Content: "x"}}}},
		"flip": testtree.Dir{"f": testtree.File{Content: "f"}},
	})
	f.save("one")
	caches := func() []string {
		var dirs []string
		if err := f.e.db.AllDirCaches(func(dir string, _ index.DirCache) error { dirs = append(dirs, dir); return nil }); err != nil {
			t.Fatal(err)
		}
		return dirs
	}
	if got := strings.Join(caches(), ","); got != ",flip,gone,gone/sub,gone/sub/deep,keep" {
		t.Fatalf("caches after first save = %q", got)
	}
	os.RemoveAll(filepath.Join(f.ws, "gone"))
	os.RemoveAll(filepath.Join(f.ws, "flip"))
	f.write("flip", "now a file")
	f.save("two")
	if got := strings.Join(caches(), ","); got != ",keep" {
		t.Fatalf("caches after the directories vanished = %q", got)
	}
}

func TestReadOnlyEngineReadsButRefusesWrites(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"a": testtree.File{Content: "1"}})
	one := f.save("one")
	f.write("a", "2")
	f.open(Options{ReadOnly: true})
	if log, err := f.e.List(context.Background(), ""); err != nil || log.Head != one.ID {
		t.Fatalf("read-only list = %+v, %v", log, err)
	}
	d, err := f.e.Diff(context.Background(), "HEAD", WorkspaceRef, DiffOptions{})
	if err != nil || len(d.Changes) != 1 {
		t.Fatalf("read-only diff = %v, %v", d, err)
	}
	if _, err := f.e.Save(context.Background(), SaveOptions{}); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("read-only save: %v, want ErrBadRequest", err)
	}
	if _, err := f.e.Restore(context.Background(), "@1", RestoreOptions{}); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("read-only restore: %v, want ErrBadRequest", err)
	}
	if got := f.readFile("a"); got != "2" {
		t.Fatalf("a read-only restore touched the workspace: %q", got)
	}
}

func TestSaveWithoutStateAfterStateIsNoChange(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"a": testtree.File{Content: "1"}})
	one, err := f.e.Save(context.Background(), SaveOptions{State: strings.NewReader("conversation")})
	if err != nil {
		t.Fatal(err)
	}
	if res := f.save("files unchanged, no state given"); res.Created || res.ID != one.ID {
		t.Fatalf("save without state = %+v, want no new checkpoint", res)
	}
	two, err := f.e.Save(context.Background(), SaveOptions{State: strings.NewReader("conversation, one turn later")})
	if err != nil || !two.Created || !two.Empty {
		t.Fatalf("save with a new state = %+v, %v; want an empty checkpoint carrying it", two, err)
	}
	same, err := f.e.Save(context.Background(), SaveOptions{State: strings.NewReader("conversation, one turn later")})
	if err != nil || same.Created {
		t.Fatalf("save with the same state = %+v, %v; want no new checkpoint", same, err)
	}
}

func TestInjectedClockStampsCheckpoints(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"a": testtree.File{Content: "1"}})
	at := time.Date(2030, 1, 2, 3, 4, 5, 6, time.UTC)
	f.open(Options{Now: func() time.Time { return at }})
	f.save("stamped")
	c, err := f.e.Show(context.Background(), "", "HEAD")
	if err != nil || !c.Time.Equal(at) {
		t.Fatalf("checkpoint time = %v, %v; want the injected %v", c.Time, err, at)
	}
}

// A save that finds nothing changed waits for no disk: the stat-cache
// records it refreshes are committed unsynced, and a power cut that loses
// them costs only reading the files again.
func TestSaveNoChangeSyncsNothing(t *testing.T) {
	t.Parallel()
	mem := faultfs.NewMem()
	var syncs atomic.Int64
	count := faultfs.InjectorFunc(func(op faultfs.Op) error {
		if op.Kind == faultfs.OpFileSync {
			syncs.Add(1)
		}
		return nil
	})
	opts := Options{}
	opts.hooks.storeFS = faultfs.Wrap(mem, count)
	// The store's lock file is the OS's: its directory must exist there.
	f := &fixture{t: t, ws: t.TempDir(), store: t.TempDir()}
	if err := testtree.Write(f.ws, testtree.Dir{"a": testtree.File{Content: "a"}, "d": testtree.Dir{"b": testtree.File{Content: "b"}}}); err != nil {
		t.Fatal(err)
	}
	f.open(opts)
	first := f.save("one")
	if syncs.Load() == 0 {
		t.Fatal("a save that stores a checkpoint synced nothing")
	}
	ageTree(t, f.ws) // every file's stamp changes; the content does not
	before := syncs.Load()
	again := f.save("nothing changed")
	if again.Created || again.ID != first.ID {
		t.Fatalf("no-change save = %+v, want the head unchanged", again)
	}
	if n := syncs.Load() - before; n != 0 {
		t.Fatalf("a save that found nothing changed synced %d times", n)
	}
	if again.Stats.BytesHashed == 0 {
		t.Fatal("the files whose stamps changed were not read again")
	}
	opts.hooks.storeFS = mem.Crash(faultfs.CrashConfig{})
	f.open(opts) // closes the engine first
	after := f.save("after a power cut")
	if after.Created || after.ID != first.ID {
		t.Fatalf("save after a power cut = %+v, want the head unchanged", after)
	}
}
