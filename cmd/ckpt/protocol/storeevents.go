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

// StoreEvents passes the engine's store-wide events to every client
// connected to the serve, serve --listen or mcp that opened the engine:
// open it with Options.OnEvent calling Send, and give it to the clients'
// Session. Today that is EventMissedChanges, sent as missedChanges.
type StoreEvents struct {
	mu   sync.Mutex
	subs map[*func(string, any)]struct{}
}

// Send notifies every client of ev when it is a store-wide event; it
// ignores the others (they reach the clients of their task through the
// request that caused them).
func (h *StoreEvents) Send(ev engine.Event) {
	if ev.Type != engine.EventMissedChanges {
		return
	}
	msg := MissedChangesEvent{Paths: ev.Paths, PathsBase64: lossless.Base64List(ev.Paths), Duration: durationMs(ev.Duration)}
	h.mu.Lock()
	to := make([]func(string, any), 0, len(h.subs))
	for notify := range h.subs {
		to = append(to, *notify)
	}
	h.mu.Unlock()
	for _, notify := range to {
		notify("missedChanges", msg)
	}
}

// add makes the store-wide events reach notify (one client connection)
// until the returned function is called. A nil StoreEvents sends none.
func (h *StoreEvents) add(notify func(method string, params any)) (remove func()) {
	if h == nil {
		return func() {}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs == nil {
		h.subs = map[*func(string, any)]struct{}{}
	}
	key := &notify
	h.subs[key] = struct{}{}
	return func() {
		h.mu.Lock()
		delete(h.subs, key)
		h.mu.Unlock()
	}
}
