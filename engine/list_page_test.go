package engine

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// ListPage reads a task's checkpoints newest first by key: pages chain by
// their last sequence number, a before far past the newest is the newest
// page, and the gaps a retention gc leaves cost nothing.
func TestListPageReadsByKeyNewestFirst(t *testing.T) {
	ws := t.TempDir()
	e := openAt(t, ws, Options{})
	ctx := context.Background()
	for i := 1; i <= 12; i++ {
		if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte(strconv.Itoa(i)), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Save(ctx, SaveOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	seqs := func(before uint64, limit int) ([]uint64, bool) {
		t.Helper()
		page, more, err := e.ListPage(ctx, "", before, limit)
		if err != nil {
			t.Fatal(err)
		}
		var out []uint64
		for _, ci := range page {
			out = append(out, ci.Seq)
		}
		return out, more
	}
	if got, more := seqs(0, 5); len(got) != 5 || got[0] != 12 || got[4] != 8 || !more {
		t.Fatalf("first page = %v (more %v), want @12..@8 and more", got, more)
	}
	if got, more := seqs(math.MaxUint64, 5); len(got) != 5 || got[0] != 12 || !more {
		t.Fatalf("page before 2^64-1 = %v (more %v), want @12..@8", got, more)
	}
	if got, more := seqs(3, 5); len(got) != 2 || got[0] != 2 || got[1] != 1 || more {
		t.Fatalf("page before @3 = %v (more %v), want @2 @1 and no more", got, more)
	}
	if _, err := e.GC(ctx, GCOptions{Policy: &RetentionPolicy{KeepLast: 2}}); err != nil {
		t.Fatal(err)
	}
	if got, more := seqs(11, 5); len(got) != 0 || more {
		t.Fatalf("page below the kept @11 @12 after gc = %v (more %v), want none", got, more)
	}
	if got, _ := seqs(0, 0); len(got) != 1 || got[0] != 12 {
		t.Fatalf("a page of limit 0 = %v, want the newest alone", got)
	}
	if page, more, err := e.ListPage(ctx, "nobody", 0, 5); err != nil || len(page) != 0 || more {
		t.Fatalf("an unknown task's page = %v %v %v", page, more, err)
	}
}
