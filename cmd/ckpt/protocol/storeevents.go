package protocol

import (
	"sync"

	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/lossless"
)

// MissedChangesEvent is the notification missedChanges: a re-verification
// of the server's workspace found directories changed with no event from
// the change watcher (a kernel blind spot); the next save reads them. It
// concerns the whole store, not a task, so every connected client gets it.
type MissedChangesEvent struct {
	// Paths are the directories, workspace-relative ("" for the root).
	Paths       []string `json:"paths"`
	PathsBase64 []string `json:"paths_base64,omitempty"` // every path's bytes when one is not valid UTF-8 (package lossless)
	Duration    int64    `json:"duration"`               // of the re-verification, in milliseconds
}

// storeEventQueue is how many store-wide events wait for a client that
// does not read; more are dropped for it (its stats still count them).
const storeEventQueue = 16

// StoreEvents passes the engine's store-wide events to every client
// connected to the serve, serve --listen or mcp that opened the engine:
// open it with Options.OnEvent calling Send, and give it to the clients'
// Session. Today that is EventMissedChanges, sent as missedChanges.
type StoreEvents struct {
	mu   sync.Mutex
	subs map[chan MissedChangesEvent]struct{}
}

// Send queues ev for every client when it is a store-wide event, and
// ignores the others (they reach the clients of their task through the
// request that caused them). It never waits for a client: the engine
// calls it holding its write lock, which a client that stopped reading
// must not keep from the others.
func (h *StoreEvents) Send(ev engine.Event) {
	if ev.Type != engine.EventMissedChanges {
		return
	}
	msg := MissedChangesEvent{Paths: ev.Paths, PathsBase64: lossless.Base64List(ev.Paths), Duration: durationMs(ev.Duration)}
	h.mu.Lock()
	defer h.mu.Unlock()
	for q := range h.subs {
		select {
		case q <- msg:
		default: // that client is far behind: it misses this one
		}
	}
}

// add sends the store-wide events to notify (one client connection), in
// order, from a goroutine of its own, until the returned function is
// called. A nil StoreEvents sends none.
func (h *StoreEvents) add(notify func(method string, params any)) (remove func()) {
	if h == nil {
		return func() {}
	}
	q := make(chan MissedChangesEvent, storeEventQueue)
	go func() {
		for ev := range q {
			notify("missedChanges", ev)
		}
	}()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs == nil {
		h.subs = map[chan MissedChangesEvent]struct{}{}
	}
	h.subs[q] = struct{}{}
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs, q)
		close(q)
	}
}
