package engine

import (
	"context"
	"testing"
)

// A finished bisect leaves its first bad checkpoint as the task's mark,
// which the next bisect of the task replaces; other tasks have none.
func TestBisectRecordsTheFirstBadCheckpointPerTask(t *testing.T) {
	ctx := context.Background()
	f := bisectFixture(t, 10, 4)
	if _, ok, err := f.e.BisectMark(ctx, ""); err != nil || ok {
		t.Fatalf("mark before any bisect: %v %v", ok, err)
	}
	badFrom := func(seq uint64) func(context.Context, string, CheckpointInfo) (BisectVerdict, error) {
		return func(_ context.Context, _ string, cp CheckpointInfo) (BisectVerdict, error) {
			if cp.Seq >= seq {
				return BisectBad, nil
			}
			return BisectGood, nil
		}
	}
	for _, seq := range []uint64{4, 7} {
		res, err := f.e.Bisect(ctx, BisectOptions{Test: badFrom(seq)})
		if err != nil {
			t.Fatal(err)
		}
		mark, ok, err := f.e.BisectMark(ctx, DefaultTask)
		if err != nil || !ok || mark != res.FirstBad.ID || res.FirstBad.Seq != seq {
			t.Fatalf("mark after the bisect finding @%d: %s %v %v (found @%d %s)", seq, mark.Short(), ok, err, res.FirstBad.Seq, res.FirstBad.ID.Short())
		}
	}
	if _, ok, err := f.e.BisectMark(ctx, "other"); err != nil || ok {
		t.Fatalf("mark of a task never bisected: %v %v", ok, err)
	}
}
