package engine

import (
	"context"
	"testing"

	"github.com/ckpt/ckpt/internal/testtree"
)

func TestHeadsNamesEveryTaskHeadAndFollowsARestore(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"a.txt": testtree.File{Content: "one"}})
	ctx := context.Background()
	if heads, err := f.e.Heads(ctx); err != nil || len(heads) != 0 {
		t.Fatalf("Heads of an empty store = %v, %v", heads, err)
	}
	one := saveTask(t, f, "chat-1", false)
	f.write("a.txt", "two")
	two := saveTask(t, f, "chat-2", false)
	heads, err := f.e.Heads(ctx)
	if err != nil || len(heads) != 2 || heads["chat-1"] != one.ID || heads["chat-2"] != two.ID {
		t.Fatalf("Heads = %v, %v; want chat-1 %s, chat-2 %s", heads, err, one.ID.Short(), two.ID.Short())
	}
	three := saveTask(t, f, "chat-1", true)
	if _, err := f.e.Restore(ctx, one.ID.String(), RestoreOptions{Task: "chat-1", NoBackup: true, Force: true}); err != nil {
		t.Fatal(err)
	}
	heads, err = f.e.Heads(ctx)
	if err != nil || heads["chat-1"] != one.ID || heads["chat-1"] == three.ID {
		t.Fatalf("after the restore Heads = %v, %v; want chat-1 back at %s", heads, err, one.ID.Short())
	}
}

func saveTask(t *testing.T, f *fixture, task string, allowEmpty bool) *SaveResult {
	t.Helper()
	res, err := f.e.Save(context.Background(), SaveOptions{Task: task, AllowEmpty: allowEmpty})
	if err != nil {
		t.Fatalf("save in %s: %v", task, err)
	}
	return res
}
