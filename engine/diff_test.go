package engine

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/internal/testbound"
	"github.com/ckpt/ckpt/internal/testtree"
	"github.com/ckpt/ckpt/objects"
)

func TestDiffCheckpointsAndWorkspace(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"a.txt": testtree.File{Content: "one\ntwo\n"}, "b.bin": testtree.File{Content: "\x00\x01"}, "gone": testtree.File{Content: "bye\n"}})
	one := f.save("one")
	f.write("a.txt", "one\nTWO\n")
	os.Remove(filepath.Join(f.ws, "gone"))
	f.write("new.txt", "hello\n")
	ctx := context.Background()
	live, err := f.e.Diff(ctx, "HEAD", WorkspaceRef, DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(live.Changes); got != "modified a.txt,deleted gone,added new.txt" {
		t.Fatalf("workspace diff = %s", got)
	}
	if !live.ToWorkspace || live.From != one.ID {
		t.Fatalf("sides = %s → workspace=%v", live.From.Short(), live.ToWorkspace)
	}
	after, err := live.Content(live.Changes[0], true)
	if err != nil || string(after) != "one\nTWO\n" {
		t.Fatalf("lazy after-content = %q, %v", after, err)
	}
	two := f.save("two")
	between, err := f.e.Diff(ctx, one.ID.String(), two.ID.String(), DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if statuses(between.Changes) != statuses(live.Changes) {
		t.Fatalf("checkpoint diff %s differs from the workspace diff %s", statuses(between.Changes), statuses(live.Changes))
	}
	var patch strings.Builder
	if err := between.WritePatch(&patch, DiffFormat{}); err != nil || !strings.Contains(patch.String(), "-two\n+TWO\n") {
		t.Fatalf("patch = %q, %v", patch.String(), err)
	}
	files, err := between.Files(DiffFormat{})
	if err != nil || len(files) != 3 || files[0].Absolute != filepath.Join(f.e.Workspace(), "a.txt") || files[0].After == nil {
		t.Fatalf("files = %+v, %v", files, err)
	}
	only, err := f.e.Diff(ctx, "@1", "@2", DiffOptions{Paths: []string{"gone"}})
	if err != nil || statuses(only.Changes) != "deleted gone" {
		t.Fatalf("filtered diff = %v, %v", only, err)
	}
	none, err := f.e.Diff(ctx, "@2", WorkspaceRef, DiffOptions{})
	if err != nil || len(none.Changes) != 0 {
		t.Fatalf("no changes must be an empty result: %v, %v", none, err)
	}
}

func statuses(cs []Change) string {
	var out []string
	for _, c := range cs {
		out = append(out, string(c.Status)+" "+c.Path)
	}
	return strings.Join(out, ",")
}

func TestDiffModes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"f": testtree.File{Content: "1"}})
	ids := []string{f.save("1").ID.String()}
	for _, v := range []string{"2", "3"} {
		f.write("f", v)
		ids = append(ids, f.save(v).ID.String())
	}
	for _, tc := range []struct {
		mode     DiffMode
		ref      string
		from, to string
	}{
		{ModeCheckpoint, "@1", ids[0], ids[1]},
		{ModeCheckpoint, "@3", ids[2], WorkspaceRef},
		{ModeFromInit, "@2", ids[0], ids[1]},
		{ModeToCurrent, "@2", ids[1], WorkspaceRef},
		{ModeFull, "", ids[0], WorkspaceRef},
	} {
		res, err := f.e.Diff(context.Background(), tc.ref, "", DiffOptions{Mode: tc.mode})
		var from, to string
		if err == nil {
			from, to = res.From.String(), res.To.String()
			if res.ToWorkspace {
				to = WorkspaceRef
			}
		}
		if err != nil || from != tc.from || to != tc.to {
			t.Errorf("%s %s = %s..%s (%v), want %s..%s", tc.mode, tc.ref, from, to, err, tc.from, tc.to)
		}
	}
	// A mode that needs a ref and has none, or one that is no mode, is a
	// bad request that says so (not an unknown ref "").
	for _, tc := range []struct {
		mode DiffMode
		want string
	}{{ModeCheckpoint, "diff mode checkpoint takes a ref"}, {"bogus", `not "bogus"`}} {
		if _, err := f.e.Diff(context.Background(), "", "", DiffOptions{Mode: tc.mode}); !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("diff mode %q with no ref: %v, want ErrBadRequest saying %q", tc.mode, err, tc.want)
		}
	}
}

// unchangedFiles sizes TestWorkspaceDiffOfUnchangedTreeOpensNoFile: 2,000
// files, 10,000 with the long tests; CI runs it once more with 100000
// outside the race detector.
var unchangedFiles = flag.Int("engine.unchanged-files", testbound.Scale(2000, 10000), "files in the unchanged-workspace diff test (multiple of 1000)")

// The workspace side of a diff reads no file whose stat matches the cache.
func TestWorkspaceDiffOfUnchangedTreeOpensNoFile(t *testing.T) {
	t.Parallel()
	dirs, perDir := *unchangedFiles/1000, 1000
	f := newFixture(t, testtree.Dir{})
	for d := 0; d < dirs; d++ {
		dir := filepath.Join(f.ws, fmt.Sprintf("d%03d", d))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < perDir; i++ {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d.txt", i)), []byte{byte(i), '\n'}, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	ageTree(t, f.ws)
	if res := f.save("all"); res.Stats.Files != uint64(dirs*perDir) {
		t.Fatalf("saved %d files", res.Stats.Files)
	}
	snap, err := f.e.scan(context.Background(), nil, objects.ID{})
	if err != nil {
		t.Fatal(err)
	}
	if n := snap.Opened.Load(); n != 0 {
		t.Fatalf("the workspace scan opened %d files, want 0", n)
	}
	if len(snap.Trees) != 0 {
		t.Fatalf("the scan recomputed %d trees of an unchanged workspace", len(snap.Trees))
	}
}
