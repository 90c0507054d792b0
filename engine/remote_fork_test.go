package engine

import (
	"context"
	"fmt"
	"testing"
)

// TestPushesFromAForkedStoreAdvanceOneForkTask: two stores share a task;
// one pushes first, and the other saves and pushes three times. Its
// history goes up as one fork task, which each later push advances by
// the new checkpoint alone; the first store's task stays as it pushed it.
func TestPushesFromAForkedStoreAdvanceOneForkTask(t *testing.T) {
	t.Parallel()
	eachRemote(t, func(t *testing.T, open func(*testing.T) (Backend, string)) {
		ctx := context.Background()
		b, url := open(t)
		a := newFixture(t, smallSyncTree())
		a.save("base")
		pushAll(t, a, b, url)
		c, _, err := cloneInto(t, b, url)
		if err != nil {
			t.Fatal(err)
		}
		a.write("f0.bin", "a's work\n")
		a.save("a's work")
		pushAll(t, a, b, url)
		fork := ""
		for i := range 3 {
			c.write("f1.bin", fmt.Sprintf("c's work %d\n", i))
			c.save(fmt.Sprint("c's work ", i))
			res := pushAll(t, c, b, url)
			if res.Forked == "" || (fork != "" && res.Forked != fork) {
				t.Fatalf("push %d from the forked store: %+v, want the fork %q", i, res, fork)
			}
			want := 1 // the new checkpoint
			if i == 0 {
				want = 2 // and the base
			}
			if res.Checkpoints != want {
				t.Fatalf("push %d uploaded %d checkpoints", i, res.Checkpoints)
			}
			fork = res.Forked
		}
		tasks, err := c.e.Tasks(ctx)
		if err != nil || len(tasks) != 2 {
			t.Fatalf("the forked store holds tasks %+v, %v; want %s and %s", tasks, err, DefaultTask, fork)
		}
		if page, err := b.List(ctx, "heads/", "", 0); err != nil || len(page.Objects) != 2 {
			t.Fatalf("the remote holds %d heads, %v; want 2", len(page.Objects), err)
		}
		for task, want := range map[string]struct {
			f   *fixture
			cps int
		}{DefaultTask: {a, 2}, fork: {c, 4}} {
			g := newFixture(t, nil)
			res, err := g.e.Clone(ctx, b, CloneOptions{URL: url, Task: task})
			if err != nil || res.Pull.Checkpoints != want.cps {
				t.Fatalf("clone of %s: %+v, %v; want %d checkpoints", task, res, err, want.cps)
			}
			assertSameTree(t, want.f.read(), g.read())
		}
	})
}
