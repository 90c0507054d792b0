package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/internal/testtree"
)

// fixture is a workspace and a store in temporary directories.
type fixture struct {
	t     *testing.T
	ws    string
	store string
	e     *Engine
	// roots, when set, opens a multi-root workspace of these roots
	// instead of ws (newRootsFixture puts them in ws, under their names).
	roots []Root
}

func newFixture(t *testing.T, tree testtree.Dir) *fixture {
	t.Helper()
	return newFixtureOpts(t, tree, Options{})
}

// newFixtureOpts is newFixture opening the engine with opts.
func newFixtureOpts(t *testing.T, tree testtree.Dir, opts Options) *fixture {
	t.Helper()
	f := &fixture{t: t, ws: t.TempDir(), store: filepath.Join(t.TempDir(), "store")}
	if err := testtree.Write(f.ws, tree); err != nil {
		t.Fatal(err)
	}
	f.open(opts)
	return f
}

// open (re)opens the engine with opts; StoreDir is filled in.
func (f *fixture) open(opts Options) {
	f.t.Helper()
	if f.e != nil {
		f.e.Close()
	}
	opts.StoreDir = f.store
	ws := f.ws
	if f.roots != nil {
		ws, opts.Roots = "", f.roots
	}
	e, err := Open(context.Background(), ws, opts)
	if err != nil {
		f.t.Fatal(err)
	}
	f.e = e
	f.t.Cleanup(func() { e.Close() })
}

func (f *fixture) save(msg string) *SaveResult {
	f.t.Helper()
	res, err := f.e.Save(context.Background(), SaveOptions{Message: msg})
	if err != nil {
		f.t.Fatalf("save %q: %v", msg, err)
	}
	return res
}

func (f *fixture) restore(ref string, opts RestoreOptions) *RestoreResult {
	f.t.Helper()
	res, err := f.e.Restore(context.Background(), ref, opts)
	f.e.syncing.Wait() // its journal's clearing, synced once it answered
	if err != nil {
		f.t.Fatalf("restore %s: %v", ref, err)
	}
	return res
}

// read returns the workspace as the file system shows it, .git directories excluded.
func (f *fixture) read() map[string]testtree.Entry {
	f.t.Helper()
	m, err := testtree.Read(f.ws, func(rel string) bool {
		return rel == ".git" || strings.HasSuffix(rel, "/.git")
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return m
}

func (f *fixture) write(rel, content string) {
	f.t.Helper()
	p := filepath.Join(f.ws, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) readFile(rel string) string {
	f.t.Helper()
	b, err := os.ReadFile(filepath.Join(f.ws, rel))
	if err != nil {
		f.t.Fatal(err)
	}
	return string(b)
}

func assertSameTree(t *testing.T, want, got map[string]testtree.Entry) {
	t.Helper()
	if d := testtree.Diff(want, got); d != "" {
		t.Fatalf("workspace differs:\n%s", d)
	}
}
