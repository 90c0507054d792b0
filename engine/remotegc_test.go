package engine

import (
	"context"
	"fmt"
	"testing"
	"time"
)

func TestRemoteGCDropsByRetentionAndDeletesOnlyWhatNoHeadNames(t *testing.T) {
	t.Parallel()
	eachRemote(t, func(t *testing.T, open func(*testing.T) (Backend, string)) {
		b, url := open(t)
		f := newSyncFixture(t, syncTree(), Options{})
		for i := 1; i <= 5; i++ {
			f.write("src/a.go", fmt.Sprintf("package a // version %d\n", i))
			f.save(fmt.Sprint("v", i))
			pushAll(t, f, b, url)
		}
		ctx := context.Background()
		opts := RemoteGCOptions{Remote: "origin", Policy: &RetentionPolicy{KeepLast: 2}, Grace: time.Nanosecond}
		first, err := f.e.RemoteGC(ctx, b, opts)
		if err != nil {
			t.Fatal(err)
		}
		if first.Tasks != 1 || first.Dropped != 3 || first.Marked == 0 || first.Deleted != 0 {
			t.Fatalf("first remote gc: %+v", first)
		}
		second, err := f.e.RemoteGC(ctx, b, opts)
		if err != nil {
			t.Fatal(err)
		}
		if second.Dropped != 0 || second.Deleted != first.Marked || second.Marked != 0 {
			t.Fatalf("second remote gc: %+v after %+v", second, first)
		}
		if res := pushAll(t, f, b, url); !res.UpToDate {
			t.Fatalf("push after the remote gc: %+v", res)
		}
		g, res, err := cloneInto(t, b, url)
		if err != nil {
			t.Fatal(err)
		}
		assertSameTree(t, f.read(), g.read())
		if res.Pull.Checkpoints != 2 {
			t.Fatalf("clone after gc imported %d checkpoints, want 2", res.Pull.Checkpoints)
		}
		if _, err := g.e.Restore(ctx, "@4", RestoreOptions{}); err != nil {
			t.Fatalf("restore of a kept checkpoint after the remote gc: %v", err)
		}
		if got := g.readFile("src/a.go"); got != "package a // version 4\n" {
			t.Fatalf("@4 has %q", got)
		}
	})
}
