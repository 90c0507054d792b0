package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/internal/testtree"
	"github.com/ckpt/ckpt/objects"
)

// versionedAPI returns the models.go of API version v: some 30 KiB of
// source lines that compress poorly alone (random identifiers), the same in
// every version but for a few lines that name v.
func versionedAPI(v int) string {
	r := rand.New(rand.NewPCG(7, 7))
	var b strings.Builder
	for i := range 800 {
		if i%200 == 0 {
			fmt.Fprintf(&b, "// Version %d, part %d.\n", v, i/200)
			continue
		}
		fmt.Fprintf(&b, "\tField%d int64 `json:\"f%x\"`\n", i, r.Uint64())
	}
	return b.String()
}

// TestRecompressStoresVersionedCopiesAsDeltas saves a workspace holding
// three versions of one API side by side (api/2019-01-01/models.go, ...),
// which differ in a few lines, with DeferCompression, and recompresses it:
// the version that moves first is stored whole and the others as delta
// records of a few hundred bytes, whether their bases moved earlier in the
// same slice or in slices of their own (committed first). A
// file of the same name whose path differs in more than digits is offered
// no base and stays whole. The store verifies, the checkpoint restores
// byte-exact, and after the version stored whole is deleted, its
// checkpoint dropped and the store collected, its content stays as the
// base the others' deltas need. Run a slice per open of the store, one
// RecompressRun carried through the opens, the heads are indexed once.
func TestRecompressStoresVersionedCopiesAsDeltas(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		slice   int64
		perOpen bool
	}{{"one slice", 0, false}, {"a slice per record", 1, false}, {"a slice per open of the store", 1, true}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			api := testtree.Dir{}
			for i, v := range []string{"2019-01-01", "2020-03-01", "2021-06-01"} {
				api[v] = testtree.Dir{"models.go": testtree.File{Content: versionedAPI(i)}}
			}
			tree := testtree.Dir{"api": api, "other": testtree.Dir{"models.go": testtree.File{Content: versionedAPI(9)}}}
			if c.perOpen {
				tree["filler"] = filler(3 << 20) // groups of 1 MiB: a slice each
			}
			f := newFixture(t, tree)
			opts := Options{DeferCompression: true, hooks: testHooks{recompressSlice: c.slice}}
			f.open(opts)
			first := f.save("first")
			want := onlyFiles(f.read())
			if c.perOpen {
				recompressPerOpen(t, f, opts)
			} else if _, err := f.e.Recompress(context.Background()); err != nil {
				t.Fatal(err)
			}
			loc := func(p string) objects.Locator {
				t.Helper()
				l, err := f.e.blobs.Stat(objects.Sum([]byte(want[p])))
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			if l := loc("other/models.go"); l.Delta() {
				t.Errorf("other/models.go stored as a delta: %+v", l)
			}
			var whole []string
			for _, v := range []string{"2019-01-01", "2020-03-01", "2021-06-01"} {
				switch l := loc("api/" + v + "/models.go"); {
				case !l.Delta():
					whole = append(whole, v)
				case l.Length > 1024:
					t.Errorf("version %s: a delta record of %d bytes", v, l.Length)
				}
			}
			if len(whole) != 1 {
				t.Fatalf("versions %v stored whole, want the one that moved first", whole)
			}
			mustVerify(t, f.e)
			f.restore(first.ID.String(), RestoreOptions{NoBackup: true})
			if got := onlyFiles(f.read()); !maps.Equal(got, want) {
				t.Fatalf("restore: files %v, want %v", sortedKeys(got), sortedKeys(want))
			}

			if err := os.RemoveAll(filepath.Join(f.ws, "api", whole[0])); err != nil {
				t.Fatal(err)
			}
			f.save("without the first version")
			if _, err := f.e.GC(context.Background(), GCOptions{Policy: &RetentionPolicy{KeepLast: 1}, RewriteBelow: 1}); err != nil {
				t.Fatal(err)
			}
			mustVerify(t, f.e)
			delete(want, "api/"+whole[0]+"/models.go")
			if err := os.RemoveAll(filepath.Join(f.ws, "api")); err != nil {
				t.Fatal(err)
			}
			f.restore("@2", RestoreOptions{NoBackup: true})
			if got := onlyFiles(f.read()); !maps.Equal(got, want) {
				t.Fatalf("restore after gc: files %v, want %v", sortedKeys(got), sortedKeys(want))
			}
		})
	}
}

// filler returns files of about n bytes in all, 256 KiB each, of
// numbered lines (quick to compress, even at the best level), named with
// letters so that no two share a key of the index of similar files.
func filler(n int) testtree.Dir {
	d := testtree.Dir{}
	for i := 0; n > 0; i++ {
		var b strings.Builder
		for line := 0; b.Len() < 256<<10; line++ {
			fmt.Fprintf(&b, "filler %d, line %d\n", i, line)
		}
		d[fmt.Sprintf("%c%c.txt", 'a'+i/26, 'a'+i%26)] = testtree.File{Content: b.String()}
		n -= b.Len()
	}
	return d
}

// recompressPerOpen recompresses f's store a slice per open of it (with
// opts), one RecompressRun carried through the opens, as the CLI's
// background process does when a command cuts in after every slice: the
// index of similar files built by the first slice must serve every later
// one, and go with the run's end.
func recompressPerOpen(t *testing.T, f *fixture, opts Options) {
	t.Helper()
	opts.RecompressRun = new(RecompressRun)
	var index *similarFiles
	for slices := 1; ; slices++ {
		f.open(opts)
		res, err := f.e.RecompressNext(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if res.Remaining == 0 {
			if opts.RecompressRun.similar != nil {
				t.Error("the run's end kept the index of similar files")
			}
			if slices < 3 {
				t.Fatalf("recompressed in %d slices; the test needs several", slices)
			}
			return
		}
		switch got := opts.RecompressRun.similar; {
		case got == nil:
			t.Fatalf("slice %d left the run without the index of similar files", slices)
		case index == nil:
			index = got
		case got != index:
			t.Fatalf("slice %d indexed the heads again", slices)
		}
	}
}

// TestRecompressRunIndexesAgainAfterADrop: a run's index of similar files
// serves every slice while the checkpoints it indexed stay, and is built
// again, from the heads left, once one of them is dropped between two
// opens of the store (by another process, say), so that the files only
// the dropped task held cannot become the bases of deltas that keep them
// (here both tasks hold one tree: the test asserts the rebuild). A slice
// cut off keeps the index.
func TestRecompressRunIndexesAgainAfterADrop(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"api": testtree.Dir{"2019-01-01": testtree.Dir{"models.go": testtree.File{Content: versionedAPI(0)}}},
		"filler": filler(5 << 20)})
	ctx := context.Background()
	run := new(RecompressRun)
	opts := Options{DeferCompression: true, RecompressRun: run, hooks: testHooks{recompressSlice: 1}}
	f.open(opts)
	if _, err := f.e.Save(ctx, SaveOptions{Task: "gone"}); err != nil {
		t.Fatal(err)
	}
	f.save("kept")
	slice := func() {
		t.Helper()
		if res, err := f.e.RecompressNext(ctx); err != nil || res.Remaining == 0 {
			t.Fatalf("slice: %+v, %v; want one that leaves work", res, err)
		}
	}
	slice()
	first := run.similar
	if first == nil || len(first.heads) != 2 {
		t.Fatalf("the first slice indexed %+v; want both tasks' heads", first)
	}
	cut, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := f.e.RecompressNext(cut); !errors.Is(err, context.Canceled) || run.similar != first {
		t.Fatalf("a slice cut off: %v, index kept %v", err, run.similar == first)
	}
	f.open(opts)
	slice()
	if run.similar != first {
		t.Fatal("a slice of the next open indexed the heads again while they all stayed")
	}
	f.open(Options{}) // another process, without the run
	if _, err := f.e.Drop(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	f.open(opts)
	slice()
	if run.similar == first || len(run.similar.heads) != 1 {
		t.Fatalf("after the drop the run indexed %d heads (the same index: %v); want the one left, indexed again",
			len(run.similar.heads), run.similar == first)
	}
}

// One RecompressRun serves one open Engine at a time: a second Open with it
// fails as a bad request (even of another store) until the first closes,
// and an Open that failed leaves it free.
func TestRecompressRunServesOneOpenEngine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	run := new(RecompressRun)
	f := newFixtureOpts(t, testtree.Dir{"a.txt": testtree.File{Content: "a"}}, Options{RecompressRun: run})
	other := Options{StoreDir: filepath.Join(t.TempDir(), "store"), RecompressRun: run}
	if e, err := Open(ctx, t.TempDir(), other); !errors.Is(err, ErrBadRequest) {
		if err == nil {
			e.Close()
		}
		t.Fatalf("a second Open with the run in use: %v, want ErrBadRequest", err)
	}
	if err := f.e.Close(); err != nil {
		t.Fatal(err)
	}
	missing := other
	missing.MustExist = true
	if _, err := Open(ctx, t.TempDir(), missing); err == nil || errors.Is(err, ErrBadRequest) {
		t.Fatalf("Open of a missing store: %v, want its own failure", err)
	}
	e, err := Open(ctx, t.TempDir(), other)
	if err != nil {
		t.Fatalf("Open with the run once its Engine closed and an Open failed: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRecompressKeepsTheBasesOfDeltasWhole edits each of three versions of
// an API after a deferred first save: each edit is saved as a delta record
// against its file's version, still raw in a deferred pack, and a vendored
// copy of each version stays in the head, where the recompression finds
// the versions alike. While an edit's delta record names its version, the
// recompression must not store that version as a delta of another (the
// edit's depth bounds its base's chain: it would read as damaged). A slice
// per record moves the versions and the edits' records apart. The store
// verifies and both checkpoints restore byte-exact.
func TestRecompressKeepsTheBasesOfDeltasWhole(t *testing.T) {
	t.Parallel()
	api, vendored := testtree.Dir{}, testtree.Dir{}
	versions := []string{"2019-01-01", "2020-03-01", "2021-06-01"}
	for i, v := range versions {
		api[v] = testtree.Dir{"models.go": testtree.File{Content: versionedAPI(i)}}
		vendored[v] = testtree.Dir{"models.go": testtree.File{Content: versionedAPI(i)}}
	}
	f := newFixture(t, testtree.Dir{"api": api, "vendor": testtree.Dir{"api": vendored}})
	f.open(Options{DeferCompression: true, hooks: testHooks{recompressSlice: 1}})
	first := f.save("first")
	want1 := onlyFiles(f.read())
	for i, v := range versions {
		f.write("api/"+v+"/models.go", versionedAPI(i)+"// edited\n")
	}
	second := f.save("edited")
	want2 := onlyFiles(f.read())
	for _, v := range versions {
		edit := want2["api/"+v+"/models.go"]
		if l, err := f.e.blobs.Stat(objects.Sum([]byte(edit))); err != nil || !l.Delta() {
			t.Fatalf("the edit of version %s is stored at %+v, %v; want a delta of its version", v, l, err)
		}
	}
	if _, err := f.e.Recompress(context.Background()); err != nil {
		t.Fatal(err)
	}
	mustVerify(t, f.e)
	for _, c := range []struct {
		id   ID
		want map[string]string
	}{{second.ID, want2}, {first.ID, want1}} {
		f.restore(c.id.String(), RestoreOptions{NoBackup: true})
		if got := onlyFiles(f.read()); !maps.Equal(got, c.want) {
			t.Fatalf("restore of %s: files %v, want %v", c.id.Short(), sortedKeys(got), sortedKeys(c.want))
		}
	}
}
