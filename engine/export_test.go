package engine

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ckpt/ckpt/engine/internal/restore"
	"github.com/ckpt/ckpt/internal/testtree"
)

// exportTree is a small workspace with an executable and, where this
// process can make one, a symlink.
func exportTree(t *testing.T) testtree.Dir {
	tree := testtree.Dir{
		"src":  testtree.Dir{"main.go": testtree.File{Content: "package main\n"}, "run.sh": testtree.File{Content: "#!/bin/sh\n", Mode: 0o755}},
		"docs": testtree.Dir{"a.md": testtree.File{Content: "# a\n"}},
	}
	if symlinksWork(t) {
		tree["link"] = testtree.Symlink{Target: "src/main.go"}
	}
	return tree
}

func TestExportWritesACheckpointElsewhereAndLeavesTheWorkspace(t *testing.T) {
	f := newFixture(t, exportTree(t))
	first := f.save("first")
	want := f.read()
	f.write("src/main.go", "package main // edited\n")
	f.save("second")
	live := f.read()

	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "out")
	res, err := f.e.Export(ctx, "@1", out, ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Checkpoint != first.ID || len(res.Written) != len(want)-2 { // less the two directories
		t.Errorf("export result %+v, want checkpoint @1 and %d paths written", res, len(want)-2)
	}
	got, err := testtree.Read(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	assertSameTree(t, want, got)
	assertSameTree(t, live, f.read())
	log, err := f.e.List(ctx, "")
	if err != nil || log.Head != log.Checkpoints[1].ID {
		t.Errorf("the head moved: %+v, %v", log, err)
	}

	sub := filepath.Join(t.TempDir(), "sub")
	if _, err := f.e.Export(ctx, "@2", sub, ExportOptions{Paths: []string{"docs"}}); err != nil {
		t.Fatal(err)
	}
	got, err = testtree.Read(sub, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got["docs/a.md"]; !ok || len(got) != 2 {
		t.Errorf("export of docs holds %v, want docs and docs/a.md only", got)
	}

	if _, err := f.e.Export(ctx, "@1", out, ExportOptions{}); !errors.Is(err, ErrBadRequest) {
		t.Errorf("export into a directory that is not empty: %v, want ErrBadRequest", err)
	}
	if _, err := f.e.Export(ctx, "@9", filepath.Join(t.TempDir(), "x"), ExportOptions{}); !errors.Is(err, ErrUnknownRef) {
		t.Errorf("export of an unknown ref: %v, want ErrUnknownRef", err)
	}
}

func TestWriteArchiveTarAndZip(t *testing.T) {
	f := newFixture(t, exportTree(t))
	f.save("first")
	ctx := context.Background()

	var tb bytes.Buffer
	if _, err := f.e.WriteArchive(ctx, "HEAD", &tb, ArchiveTar, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(&tb)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		switch h.Name {
		case "src/run.sh":
			if runtime.GOOS != "windows" && h.Mode&0o111 == 0 {
				t.Errorf("run.sh mode %o lost its exec bits", h.Mode)
			}
		case "link":
			if h.Typeflag != tar.TypeSymlink || h.Linkname != "src/main.go" {
				t.Errorf("link: type %c target %q", h.Typeflag, h.Linkname)
			}
		case "src/main.go":
			b, _ := io.ReadAll(tr)
			if string(b) != "package main\n" {
				t.Errorf("main.go in tar = %q", b)
			}
		}
	}
	wantNames := []string{"docs/", "docs/a.md", "link", "src/", "src/main.go", "src/run.sh"}
	if !symlinksWork(t) {
		wantNames = slices.DeleteFunc(wantNames, func(n string) bool { return n == "link" })
	}
	if !slices.Equal(names, wantNames) {
		t.Errorf("tar entries %q, want %q", names, wantNames)
	}

	var zb bytes.Buffer
	if _, err := f.e.WriteArchive(ctx, "HEAD", &zb, ArchiveZip, ExportOptions{Paths: []string{"src/main.go"}}); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(zb.Bytes()), int64(zb.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var znames []string
	for _, zf := range zr.File {
		znames = append(znames, zf.Name)
	}
	if !slices.Equal(znames, []string{"src/", "src/main.go"}) {
		t.Errorf("zip of src/main.go holds %q", znames)
	}
	if _, err := f.e.WriteArchive(ctx, "HEAD", io.Discard, "rar", ExportOptions{}); !errors.Is(err, ErrBadRequest) {
		t.Errorf("unknown format: %v, want ErrBadRequest", err)
	}
}

// bisectFixture saves n checkpoints of a file "ok" holding "yes" up to
// checkpoint bad-1 and "no" from checkpoint bad on (1-based).
func bisectFixture(t *testing.T, n, bad int) *fixture {
	f := newFixture(t, testtree.Dir{"ok": testtree.File{Content: "yes"}, "n": testtree.File{Content: "0"}})
	for i := 1; i <= n; i++ {
		f.write("n", string(rune('0'+i%10)))
		if i == bad {
			f.write("ok", "no")
		}
		f.save("step")
	}
	return f
}

func TestBisectFindsTheFirstBadCheckpointInLog2Runs(t *testing.T) {
	f := bisectFixture(t, 60, 37)
	live := f.read()
	runs := 0
	scratch := filepath.Join(t.TempDir(), "scratch")
	res, err := f.e.Bisect(context.Background(), BisectOptions{Dir: scratch, Test: func(_ context.Context, dir string, cp CheckpointInfo) (BisectVerdict, error) {
		runs++
		b, err := os.ReadFile(filepath.Join(dir, "ok"))
		if err != nil {
			return 0, err
		}
		if string(b) == "yes" {
			return BisectGood, nil
		}
		return BisectBad, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.FirstBad.Seq != 37 {
		t.Errorf("first bad = @%d, want @37", res.FirstBad.Seq)
	}
	if runs > 6+2 || len(res.Steps) != runs {
		t.Errorf("%d runs (%d steps recorded), want at most ceil(log2(59)) = 6, and the two ends left to their defaults", runs, len(res.Steps))
	}
	var okChange bool
	for _, c := range res.Diff.Changes {
		okChange = okChange || c.Path == "ok"
	}
	if !okChange {
		t.Errorf("diff of the first bad checkpoint %+v does not show ok", res.Diff.Changes)
	}
	assertSameTree(t, live, f.read())
}

func TestBisectSkipsAndRewritesWhatTheTestChanged(t *testing.T) {
	f := bisectFixture(t, 20, 11)
	res, err := f.e.Bisect(context.Background(), BisectOptions{Test: func(_ context.Context, dir string, cp CheckpointInfo) (BisectVerdict, error) {
		b, err := os.ReadFile(filepath.Join(dir, "ok"))
		if err != nil {
			return 0, err
		}
		// A careless test overwrites a tracked file; the next step must
		// still see its own checkpoint's content.
		if err := os.WriteFile(filepath.Join(dir, "ok"), []byte("scribbled over, longer"), 0o644); err != nil {
			return 0, err
		}
		switch {
		case cp.Seq == 10:
			return BisectSkip, nil
		case string(b) == "yes":
			return BisectGood, nil
		case string(b) == "no":
			return BisectBad, nil
		}
		return 0, errors.New("the scratch directory showed " + string(b))
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.FirstBad.Seq != 11 {
		t.Errorf("first bad = @%d, want @11", res.FirstBad.Seq)
	}
	var cands []uint64
	for _, c := range res.Candidates {
		cands = append(cands, c.Seq)
	}
	if !slices.Equal(cands, []uint64{10, 11}) {
		t.Errorf("candidates %v, want [10 11]: @10 was skipped", cands)
	}
	if _, ok, err := f.e.BisectMark(context.Background(), ""); err != nil || ok {
		t.Errorf("a bisect that left candidates recorded a mark (%v, %v); it found no first bad checkpoint", ok, err)
	}
	if _, err := f.e.Bisect(context.Background(), BisectOptions{Good: "@5", Bad: "@3", Test: func(context.Context, string, CheckpointInfo) (BisectVerdict, error) {
		return BisectGood, nil
	}}); !errors.Is(err, ErrBadRequest) {
		t.Errorf("good after bad: %v, want ErrBadRequest", err)
	}
}

// An end left to its default is tested before the search: a test that
// passes at the head, or fails at the first checkpoint, leaves nothing to
// bisect (where the head used to be reported as the first bad checkpoint,
// never tested). An end given is trusted, as git bisect trusts its marks.
func TestBisectTestsTheEndsLeftToTheirDefaults(t *testing.T) {
	f := bisectFixture(t, 6, 4)
	verdict := func(v BisectVerdict) func(context.Context, string, CheckpointInfo) (BisectVerdict, error) {
		return func(context.Context, string, CheckpointInfo) (BisectVerdict, error) { return v, nil }
	}
	for _, c := range []struct {
		opts BisectOptions
		want string
	}{
		{BisectOptions{Test: verdict(BisectGood)}, "passes at the task's head (@6"},
		{BisectOptions{Test: verdict(BisectBad)}, "fails at the task's first checkpoint (@1"},
		{BisectOptions{Bad: "@6", Test: verdict(BisectBad)}, "fails at the task's first checkpoint (@1"},
		{BisectOptions{Test: verdict(BisectSkip)}, "cannot tell at the task's head (@6"},
		{BisectOptions{Bad: "@6", Test: verdict(BisectSkip)}, "cannot tell at the task's first checkpoint (@1"},
	} {
		if _, err := f.e.Bisect(context.Background(), c.opts); !errors.Is(err, ErrNoBisection) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("bisect %+v: %v, want ErrNoBisection saying %q", c.opts, err, c.want)
		}
	}
	res, err := f.e.Bisect(context.Background(), BisectOptions{Good: "@1", Bad: "@6", Test: verdict(BisectGood)})
	if err != nil || res.FirstBad.Seq != 6 {
		t.Fatalf("bisect with both ends given, every test passing: %v; want @6, the bad end given", err)
	}
	for _, s := range res.Steps {
		if s.Checkpoint.Seq == 1 || s.Checkpoint.Seq == 6 {
			t.Errorf("the bisect tested @%d, an end it was given", s.Checkpoint.Seq)
		}
	}
}

// afterCreate is a restore.FS that calls then after each file it creates.
type afterCreate struct {
	restore.FS
	then func()
}

func (a afterCreate) Create(name string) (restore.TempFile, error) {
	f, err := a.FS.Create(name)
	a.then()
	return f, err
}

// An export into a directory inside the workspace keeps its temporaries
// while the same process discards an interrupted restore's journal and
// sweeps the whole workspace for that restore's: the sweep takes no
// export's temporary for one.
func TestAnExportInsideTheWorkspaceOutlivesADiscardsSweep(t *testing.T) {
	t.Parallel()
	f := outdatedRestore(t, nil)
	ctx := context.Background()
	var once sync.Once
	var settled *SettledRestore
	var settleErr error
	discard := func() { settled, settleErr = f.e.SettleRestore(ctx) }
	f.open(Options{hooks: testHooks{wrapExportFS: func(fsys restore.FS) restore.FS {
		return afterCreate{fsys, func() { once.Do(discard) }}
	}}})
	out := filepath.Join(f.ws, "out")
	if _, err := f.e.Export(ctx, "@1", out, ExportOptions{}); err != nil {
		t.Fatalf("export: %v", err)
	}
	if settleErr != nil || settled == nil || settled.Discarded == "" {
		t.Fatalf("settle during the export: %+v, %v; want the journal discarded", settled, settleErr)
	}
	for rel, want := range map[string]string{"b": "b1", "d/a": "a1", "e/c": "c1"} {
		if got := f.readFile(filepath.Join("out", rel)); got != want {
			t.Errorf("out/%s = %q, want @1's %q", rel, got, want)
		}
	}
}
