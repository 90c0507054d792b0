package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// keepAlive is how often an idle event stream sends a comment, so proxies
// and the browser see the connection is alive.
const keepAlive = 25 * time.Second

// events streams the backend's events as server-sent events until the
// client goes away.
func (s *server) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	ch := s.b.Subscribe(ctx)
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprint(w, ": ready\n\n")
	flusher.Flush()
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			fmt.Fprint(w, ": keep-alive\n\n")
		case ev, ok := <-ch:
			if !ok {
				return
			}
			data, err := json.Marshal(ev)
			if err != nil {
				return
			}
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.Type, data)
		}
		flusher.Flush()
	}
}

// PollHeads turns a function returning every task's head into an event
// stream, for backends without a resident engine to push events: every
// interval it compares the heads with the last ones and sends a checkpoint
// event per task whose head moved or appeared. The channel closes when ctx
// ends; an error from heads skips that round.
func PollHeads(ctx context.Context, interval time.Duration, heads func(context.Context) (map[string]string, error)) <-chan Event {
	ch := make(chan Event, 16)
	go func() {
		defer close(ch)
		last, _ := heads(ctx)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			now, err := heads(ctx)
			if err != nil {
				continue
			}
			for task, head := range now {
				if last[task] == head {
					continue
				}
				select {
				case ch <- Event{Type: EventCheckpoint, Task: task, ID: head}:
				case <-ctx.Done():
					return
				}
			}
			last = now
		}
	}()
	return ch
}
