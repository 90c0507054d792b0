package diffview

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ckpt/ckpt/objects"
)

// TestInOrderEmitsInIndexOrder: work finishing out of order (later indices
// first) is still emitted 0, 1, 2, ..., each after its own work, and never
// more than 2*GOMAXPROCS results wait for emit.
func TestInOrderEmitsInIndexOrder(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	const n = 200
	var (
		mu       sync.Mutex
		finished = make([]bool, n)
		emitted  []int
		ahead    atomic.Int64
		maxAhead atomic.Int64
	)
	// Index 0 waits until index 1 has finished, so emit must hold back
	// results that are ready.
	oneDone := make(chan struct{})
	err := inOrder(n, func(i int) error {
		if i == 0 {
			<-oneDone
		}
		a := ahead.Add(1)
		for m := maxAhead.Load(); a > m && !maxAhead.CompareAndSwap(m, a); m = maxAhead.Load() {
		}
		mu.Lock()
		finished[i] = true
		mu.Unlock()
		if i == 1 {
			close(oneDone)
		}
		return nil
	}, func(i int) error {
		mu.Lock()
		defer mu.Unlock()
		if !finished[i] {
			t.Errorf("emit(%d) before its work finished", i)
		}
		emitted = append(emitted, i)
		ahead.Add(-1)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, got := range emitted {
		if got != i {
			t.Fatalf("emitted %v, want 0..%d in order", emitted, n-1)
		}
	}
	if len(emitted) != n {
		t.Fatalf("emitted %d results, want %d", len(emitted), n)
	}
	if m := maxAhead.Load(); m > 2*4 {
		t.Errorf("%d results waited for emit at once, want at most %d", m, 2*4)
	}
}

// TestInOrderStopsAtTheFirstError: the error of the lowest failing index
// is returned, nothing after it is emitted, and no new work starts once
// the error is seen (work already handed out may finish).
func TestInOrderStopsAtTheFirstError(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	const n, failAt = 1000, 10
	boom := errors.New("boom")
	var started atomic.Int64
	var emitted []int
	err := inOrder(n, func(i int) error {
		started.Add(1)
		if i >= failAt {
			return boom
		}
		return nil
	}, func(i int) error {
		emitted = append(emitted, i)
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if len(emitted) != failAt {
		t.Errorf("emitted %v, want the %d before the failure", emitted, failAt)
	}
	// The window bounds what was handed out past the failure.
	if s := started.Load(); s > failAt+1+2*2 {
		t.Errorf("work started %d times, want at most %d", s, failAt+1+2*2)
	}

	emitErr := errors.New("emit failed")
	var emits int
	err = inOrder(n, func(int) error { return nil }, func(i int) error {
		emits++
		if i == 3 {
			return emitErr
		}
		return nil
	})
	if !errors.Is(err, emitErr) || emits != 4 {
		t.Errorf("emit error: err %v after %d emits, want emit failed after 4", err, emits)
	}
}

// A patch whose third change cannot be loaded returns the loader's error,
// with the sections of the first two written, in order, and nothing of
// the others.
func TestWritePatchKeepsTheSectionsBeforeAFailure(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	s := newMemStore()
	var changes []Change
	for i := range 8 {
		before, after := s.putBlob([]byte("old\n")), s.putBlob([]byte(fmt.Sprintf("new %d\n", i)))
		if i == 2 {
			after = objects.Sum([]byte("never stored"))
		}
		changes = append(changes, Change{Path: fmt.Sprintf("f%d", i), Status: StatusModified,
			Before: &Side{Kind: objects.KindFile, Mode: 0o644, Size: 4, ID: before},
			After:  &Side{Kind: objects.KindFile, Mode: 0o644, Size: 6, ID: after}})
	}
	var out bytes.Buffer
	err := WritePatch(&out, changes, s, s, Options{})
	if !errors.Is(err, errNotFound) {
		t.Fatalf("err = %v, want the loader's", err)
	}
	got := out.String()
	if !strings.Contains(got, "diff --git a/f0 b/f0") || !strings.Contains(got, "+new 1\n") ||
		strings.Index(got, "a/f0") > strings.Index(got, "a/f1") || strings.Contains(got, "f2") || strings.Contains(got, "f3") {
		t.Fatalf("output before the failure:\n%s", got)
	}
}
