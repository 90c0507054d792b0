package engine

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ckpt/ckpt/internal/testtree"
)

func TestEventsFollowTheLifecycle(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if err := testtree.Write(ws, testtree.Dir{"f": testtree.File{Content: "1"}}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var events []Event
	opts := Options{StoreDir: filepath.Join(t.TempDir(), "s"), OnEvent: func(ev Event) {
		mu.Lock()
		events = append(events, ev)
		mu.Unlock()
	}}
	e, err := Open(context.Background(), ws, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	one, err := e.Save(ctx, SaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Save(ctx, SaveOptions{AllowEmpty: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Restore(ctx, one.ID.String(), RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Restore(ctx, "@99", RestoreOptions{}); !errors.Is(err, ErrUnknownRef) {
		t.Fatal(err)
	}
	want := []EventType{EventInitialize, EventCheckpoint, EventCheckpoint, EventRestore, EventError}
	if len(events) != len(want) {
		t.Fatalf("events = %+v", events)
	}
	for i, ev := range events {
		if ev.Type != want[i] {
			t.Fatalf("event %d = %s, want %s", i, ev.Type, want[i])
		}
	}
	if !events[0].Created || events[0].Workspace != e.Workspace() || !events[0].BaseHash.IsZero() {
		t.Errorf("initialize = %+v", events[0])
	}
	if events[1].ToHash != one.ID || !events[1].FromHash.IsZero() || !events[1].Created {
		t.Errorf("first checkpoint event = %+v", events[1])
	}
	if events[2].FromHash != one.ID {
		t.Errorf("second checkpoint event = %+v", events[2])
	}
	if events[3].Commit != one.ID || events[4].Err == nil {
		t.Errorf("restore/error events = %+v %+v", events[3], events[4])
	}
}
