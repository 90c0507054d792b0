package engine

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ckpt/ckpt/internal/testtree"
)

// modes lists the modes checkpoint ref records for its top-level files.
func modes(t *testing.T, f *fixture, ref string) map[string]uint32 {
	t.Helper()
	ents, err := f.e.Ls(context.Background(), DefaultTask, ref, "")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]uint32{}
	for _, e := range ents {
		m[e.Name] = e.Mode
	}
	return m
}

// TestSaveCarriesModesWhereTheFileSystemHasNone plays Windows on Linux: a
// checkpoint made with exec and private bits, then a workspace whose files
// all show 0644 (as Windows shows them). The unchanged files keep their
// modes (no phantom change), a changed executable stays executable, a new
// file is 0644, and restored back on Linux the files get their modes again.
func TestSaveCarriesModesWhereTheFileSystemHasNone(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a checkpoint with exec bits cannot be made on Windows; the test plays Windows on Linux")
	}
	f := newFixture(t, testtree.Dir{
		"run.sh": testtree.File{Content: "#!/bin/sh\n", Mode: 0o755},
		"tool":   testtree.File{Content: "v1", Mode: 0o755},
		"key":    testtree.File{Content: "secret", Mode: 0o600},
	})
	f.save("unix")
	f.open(Options{hooks: testHooks{carryModes: true}})
	for _, n := range []string{"run.sh", "tool", "key"} {
		if err := os.Chmod(filepath.Join(f.ws, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if res := f.save("no change"); res.Created {
		t.Fatalf("modes the file system cannot show were saved as a change: %+v", res)
	}
	f.write("tool", "v2")
	f.write("new", "n")
	f.save("edited")
	want := map[string]uint32{"run.sh": 0o755, "tool": 0o755, "key": 0o600, "new": 0o644}
	if got := modes(t, f, "@2"); !maps.Equal(got, want) {
		t.Fatalf("@2 modes %v, want %v", got, want)
	}
	f.open(Options{})
	f.restore("@1", RestoreOptions{})
	f.restore("@2", RestoreOptions{})
	for n, m := range want {
		if fi, err := os.Stat(filepath.Join(f.ws, n)); err != nil || uint32(fi.Mode().Perm()) != m {
			t.Fatalf("%s restored on Linux: %v %v, want %o", n, fi.Mode(), err, m)
		}
	}
}

// TestReadOnlyFileRoundTrips saves a read-only file (the read-only attribute
// on Windows), restores an earlier checkpoint over it and the later one
// back: the file is written and read-only again.
func TestReadOnlyFileRoundTrips(t *testing.T) {
	f := newFixture(t, testtree.Dir{"ro": testtree.File{Content: "v1"}})
	f.save("writable")
	f.write("ro", "v2")
	if err := os.Chmod(filepath.Join(f.ws, "ro"), 0o444); err != nil {
		t.Fatal(err)
	}
	f.save("read-only")
	if m := modes(t, f, "@2")["ro"]; m&0o222 != 0 {
		t.Fatalf("read-only file saved as %o", m)
	}
	for _, step := range []struct{ ref, content string }{{"@1", "v1"}, {"@2", "v2"}} {
		if res := f.restore(step.ref, RestoreOptions{}); len(res.Conflicts) != 0 {
			t.Fatalf("restore %s: conflicts %+v", step.ref, res.Conflicts)
		}
		fi, err := os.Stat(filepath.Join(f.ws, "ro"))
		if err != nil || f.readFile("ro") != step.content || (fi.Mode().Perm()&0o200 == 0) != (step.ref == "@2") {
			t.Fatalf("after restore %s: %q, mode %v (%v)", step.ref, f.readFile("ro"), fi.Mode(), err)
		}
	}
}
