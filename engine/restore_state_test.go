package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/internal/testtree"
)

// A state-only restore ("restore the task only") hands back the state of an
// older checkpoint and leaves the files and the head where they are, so the
// next save's parent is the checkpoint the files were last saved as.
func TestRestoreStateOnlyKeepsHeadAndFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, testtree.Dir{"f": testtree.File{Content: "v1"}})
	one, err := f.e.Save(ctx, SaveOptions{Message: "one", State: strings.NewReader("s1")})
	if err != nil {
		t.Fatal(err)
	}
	f.write("f", "v2")
	two, err := f.e.Save(ctx, SaveOptions{Message: "two", State: strings.NewReader("s2")})
	if err != nil {
		t.Fatal(err)
	}
	// Paths beside it would be ignored: they are refused.
	if _, err := f.e.Restore(ctx, one.ID.String(), RestoreOptions{Only: OnlyState, Paths: []string{"f"}}); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("state-only restore of a path: %v, want ErrBadRequest", err)
	}
	res := f.restore(one.ID.String(), RestoreOptions{Only: OnlyState})
	if res.Restored != one.ID || len(res.Written)+len(res.Deleted) != 0 || !res.Backup.IsZero() {
		t.Fatalf("state-only restore = %+v", res)
	}
	if got := f.readFile("f"); got != "v2" {
		t.Fatalf("files = %q, want v2", got)
	}
	log, err := f.e.List(ctx, DefaultTask)
	if err != nil || log.Head != two.ID {
		t.Fatalf("head = %v (%v), want %v", log.Head, err, two.ID)
	}
	f.write("f", "v3")
	three, err := f.e.Save(ctx, SaveOptions{Message: "three"})
	if err != nil || three.Parent != two.ID {
		t.Fatalf("next save parent = %v (%v), want %v", three.Parent, err, two.ID)
	}
}
