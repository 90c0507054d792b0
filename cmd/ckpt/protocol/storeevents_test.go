package protocol

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ckpt/ckpt/engine"
)

// A client that stops reading never holds up Send (which the engine calls
// under its write lock) nor the other clients: it gets what its queue
// held, in order, and misses the rest; the others get every event, and
// events of other types reach none of them.
func TestStoreEventsNeverWaitForAClient(t *testing.T) {
	h := &StoreEvents{}
	stuck, release := make(chan string, 1), make(chan struct{})
	removeStuck := h.add(func(method string, params any) {
		stuck <- params.(MissedChangesEvent).Paths[0]
		<-release
	})
	got := make(chan string, 100)
	removeReader := h.add(func(method string, params any) {
		if method != "missedChanges" {
			t.Errorf("method %q", method)
		}
		got <- params.(MissedChangesEvent).Paths[0]
	})
	h.Send(engine.Event{Type: engine.EventCheckpoint})
	h.Send(engine.Event{Type: engine.EventMissedChanges, Paths: []string{"d0"}})
	if first := <-stuck; first != "d0" {
		t.Fatalf("the stuck client got %q first", first)
	}
	read := []string{<-got}
	var sent []string
	for i := range 3 * storeEventQueue { // far more than the stuck one's queue holds: Send must not block
		sent = append(sent, fmt.Sprint("d", i+1))
		h.Send(engine.Event{Type: engine.EventMissedChanges, Paths: []string{sent[i]}})
		read = append(read, <-got)
	}
	if want := append([]string{"d0"}, sent...); !slices.Equal(read, want) {
		t.Fatalf("the reading client got %q, want %q", read, want)
	}
	close(release)
	var late []string
	for range storeEventQueue {
		late = append(late, <-stuck)
	}
	if !slices.Equal(late, sent[:storeEventQueue]) {
		t.Fatalf("the stuck client then got %q, want the %d its queue held: %q", late, storeEventQueue, sent[:storeEventQueue])
	}
	removeStuck()
	removeReader()
	h.Send(engine.Event{Type: engine.EventMissedChanges, Paths: []string{"after"}})
	select {
	case p := <-got:
		t.Fatalf("a removed client got %q", p)
	default:
	}
}
