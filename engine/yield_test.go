package engine

import (
	"context"
	"testing"
)

// Background work is stopped by a write that asks for the lock while it
// runs, and by one that asked before it began; once the write holds the
// lock, the next work runs to its end.
func TestYielderStopsWorkForAWrite(t *testing.T) {
	var y yielder
	stopped := func() (stopped bool) {
		y.during(context.Background(), func(run context.Context) { stopped = run.Err() != nil })
		return stopped
	}
	if stopped() {
		t.Fatal("work with no write waiting was stopped")
	}
	y.during(context.Background(), func(run context.Context) {
		holding := y.giveWay()
		defer holding()
		if run.Err() == nil {
			t.Fatal("a write asking for the lock did not stop the work in progress")
		}
	})
	holding := y.giveWay()
	if !stopped() {
		t.Fatal("work that took the lock while a write waited for it was not stopped")
	}
	holding()
	if stopped() {
		t.Fatal("work after the write took the lock was stopped")
	}
}
