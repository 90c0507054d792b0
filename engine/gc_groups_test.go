package engine

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ckpt/ckpt/internal/testbound"
)

// TestGCWithGroupsReclaimsWhatItDoesWithout collects a history of
// checkpoints, each rewriting one file, down to its last tenth: once from
// a store of group records and once from a store of a record per blob, at
// the threshold that rewrites every pack with a dead record and at the
// default. With groups gc must leave a store no larger and reclaim at
// least the same share of it (groups compress the dead versions too, so
// the bytes they take are fewer); that holds only if gc regroups the live
// members of mostly dead groups (copying groups whole reclaimed nothing
// here). The store must verify. Each of the two stores is built once and
// collected as a copy at each threshold.
//
// Two histories: 400 checkpoints (1,000 with the long tests) of a 200-file
// tree, which rewrite each file at least twice, so that most of every
// pack is dead and gc must reclaim at either threshold; and, with the long
// tests, the GC benchmark's 1,000 checkpoints on a fifth of its tree
// (2,000 files, a third of the blobs dead), where the default threshold
// leaves the packs as they are.
func TestGCWithGroupsReclaimsWhatItDoesWithout(t *testing.T) {
	t.Parallel()
	t.Run("churn", func(t *testing.T) {
		gcGroupsAgainstUngrouped(t, historyShape{10, 20, testbound.Scale(400, benchCheckpoints)}, true)
	})
	t.Run("wide", func(t *testing.T) {
		testbound.Long(t, "gc of 1,000 checkpoints of a 2,000-file tree")
		gcGroupsAgainstUngrouped(t, historyShape{benchDirs / 5, benchFiles, benchCheckpoints}, false)
	})
}

// gcGroupsAgainstUngrouped runs TestGCWithGroupsReclaimsWhatItDoesWithout
// on a history of shape; mostlyDead says that the default threshold
// rewrites its packs, so gc must reclaim bytes there too.
func gcGroupsAgainstUngrouped(t *testing.T, shape historyShape, mostlyDead bool) {
	keep := shape.checkpoints / 10
	modes := []bool{false, true}
	var built, wss [2]string
	for i, ungrouped := range modes {
		built[i], wss[i] = buildHistoryStore(t, Options{hooks: testHooks{ungrouped: ungrouped}}, shape)
	}
	for _, below := range []float64{1, DefaultRewriteBelow} {
		var after, reclaimed [2]int64
		var share [2]float64
		for i, ungrouped := range modes {
			store := filepath.Join(t.TempDir(), "store")
			copyDir(t, built[i], store)
			e, err := Open(context.Background(), wss[i], Options{StoreDir: store, hooks: testHooks{ungrouped: ungrouped}})
			if err != nil {
				t.Fatal(err)
			}
			res, err := e.GC(context.Background(), GCOptions{Policy: &RetentionPolicy{KeepLast: keep}, RewriteBelow: below})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Dropped) != shape.checkpoints-keep {
				t.Fatalf("dropped %d checkpoints, want %d", len(res.Dropped), shape.checkpoints-keep)
			}
			mustVerify(t, e)
			after[i], reclaimed[i] = res.PackBytesAfter, res.Reclaimed()
			share[i] = float64(res.Reclaimed()) / float64(res.PackBytesBefore)
			t.Logf("rewrite below %v, ungrouped=%v: %d -> %d bytes (reclaimed %d, copied %d)",
				below, ungrouped, res.PackBytesBefore, res.PackBytesAfter, res.Reclaimed(), res.BytesCopied)
			e.Close()
			if reclaimed[i] <= 0 && (below == 1 || mostlyDead) {
				t.Fatalf("rewrite below %v, ungrouped=%v: gc reclaimed nothing of a store whose packs hold dead records", below, ungrouped)
			}
		}
		if share[0] < share[1] || after[0] > after[1] {
			t.Fatalf("rewrite below %v: with groups gc reclaimed %d bytes (%.1f%%) leaving %d, without %d (%.1f%%) leaving %d",
				below, reclaimed[0], 100*share[0], after[0], reclaimed[1], 100*share[1], after[1])
		}
	}
}
