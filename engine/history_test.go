package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ckpt/ckpt/internal/testtree"
)

// historyMessages is the messages of a history's entries, newest first.
func historyMessages(h *History) []string {
	var out []string
	for _, e := range h.Entries {
		out = append(out, e.Checkpoint.Message)
	}
	return out
}

func TestHistoryListsTheCheckpointsThatChangedAPath(t *testing.T) {
	f := newFixture(t, testtree.Dir{
		"src": testtree.Dir{"a.go": testtree.File{Content: "a1"}, "b.go": testtree.File{Content: "b1"}},
		"doc": testtree.Dir{"readme": testtree.File{Content: "r1"}},
	})
	f.save("base")
	f.write("src/a.go", "a2")
	f.save("edit a")
	f.write("doc/readme", "r2")
	f.save("edit readme")
	if err := os.Rename(filepath.Join(f.ws, "src/a.go"), filepath.Join(f.ws, "src/c.go")); err != nil {
		t.Fatal(err)
	}
	f.save("rename a to c")
	if err := os.Remove(filepath.Join(f.ws, "src/b.go")); err != nil {
		t.Fatal(err)
	}
	f.save("delete b")

	ctx := context.Background()
	for _, tc := range []struct {
		paths []string
		want  []string
	}{
		{[]string{"src/a.go"}, []string{"rename a to c", "edit a", "base"}},
		{[]string{"src"}, []string{"delete b", "rename a to c", "edit a", "base"}},
		{[]string{"doc"}, []string{"edit readme", "base"}},
		{nil, []string{"delete b", "rename a to c", "edit readme", "edit a", "base"}},
	} {
		h, err := f.e.History(ctx, HistoryOptions{Paths: tc.paths})
		if err != nil {
			t.Fatal(err)
		}
		if got := historyMessages(h); !slices.Equal(got, tc.want) {
			t.Errorf("History(%q) = %q, want %q", tc.paths, got, tc.want)
		}
		if h.Checkpoints != 5 {
			t.Errorf("History(%q) compared %d checkpoints, want 5", tc.paths, h.Checkpoints)
		}
	}

	h, err := f.e.History(ctx, HistoryOptions{Paths: []string{"src/a.go"}})
	if err != nil {
		t.Fatal(err)
	}
	edit := h.Entries[1].Diff.Changes
	if len(edit) != 1 || edit[0].Status != StatusModified || edit[0].Before.Size != 2 || edit[0].After.Size != 2 {
		t.Errorf("edit a: changes %+v, want one modification of a 2-byte file", edit)
	}
	if st := h.Entries[0].Diff.Changes[0].Status; st != StatusDeleted {
		t.Errorf("rename seen through src/a.go alone: status %s, want deleted (c.go is outside the path)", st)
	}
	if st := h.Entries[2].Diff.Changes[0].Status; st != StatusAdded {
		t.Errorf("first checkpoint: status %s, want added", st)
	}
}

func TestHistoryAcrossTasksAndBadPaths(t *testing.T) {
	f := newFixture(t, testtree.Dir{"f": testtree.File{Content: "1"}})
	ctx := context.Background()
	if _, err := f.e.Save(ctx, SaveOptions{Task: "one", Message: "one: first"}); err != nil {
		t.Fatal(err)
	}
	f.write("f", "2")
	if _, err := f.e.Save(ctx, SaveOptions{Task: "two", Message: "two: first"}); err != nil {
		t.Fatal(err)
	}
	h, err := f.e.History(ctx, HistoryOptions{All: true, Paths: []string{"f"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := historyMessages(h); len(got) != 2 {
		t.Errorf("history of every task = %q, want both tasks' checkpoints", got)
	}
	h, err = f.e.History(ctx, HistoryOptions{Task: "one", Paths: []string{"f"}})
	if err != nil || len(h.Entries) != 1 || h.Entries[0].Checkpoint.Task != "one" {
		t.Errorf("history of task one = %+v, %v", h, err)
	}
	if _, err := f.e.History(ctx, HistoryOptions{Paths: []string{"../outside"}}); !errors.Is(err, ErrBadRequest) {
		t.Errorf("history of a path outside the workspace: %v, want ErrBadRequest", err)
	}
}

// TestHistoryReadsOnlyTheTreesOnThePath builds a long chain in a wide tree
// and checks that the trees read grow with the chain, not with the tree.
func TestHistoryReadsOnlyTheTreesOnThePath(t *testing.T) {
	tree := testtree.Dir{}
	for d := range 20 {
		sub := testtree.Dir{}
		for i := range 20 {
			sub[fmt.Sprintf("f%02d", i)] = testtree.File{Content: fmt.Sprint(d, i)}
		}
		tree[fmt.Sprintf("d%02d", d)] = sub
	}
	f := newFixture(t, tree)
	const steps = 40
	for i := range steps {
		f.write(fmt.Sprintf("d%02d/f00", i%20), fmt.Sprint("edit ", i))
		f.save(fmt.Sprint("step ", i))
	}
	h, err := f.e.History(context.Background(), HistoryOptions{Paths: []string{"d03/f00"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := historyMessages(h); !slices.Equal(got, []string{"step 23", "step 3", "step 0"}) {
		t.Errorf("history = %q", got)
	}
	// Each checkpoint's root and its d03 (when it differs from the
	// parent's) is all there is to read: at most two trees per checkpoint.
	if h.TreesRead > 2*(steps+1) {
		t.Errorf("read %d trees for %d checkpoints, want at most %d", h.TreesRead, h.Checkpoints, 2*(steps+1))
	}
}
