package watch

import "sync"

// walkAlways is the backend of platforms without a scalable watcher: it
// vouches for nothing, so every Changes reports All and the engine walks
// as it does without a watcher.
type walkAlways struct {
	why    Reason
	detail string // Stats.Fallback

	mu struct {
		sync.Mutex
		closed bool
	}
}

func (b *walkAlways) watch(string) {}

func (b *walkAlways) changes() Changes {
	b.mu.Lock()
	defer b.mu.Unlock()
	why := b.why
	if b.mu.closed {
		why |= ReasonClosed
	}
	return Changes{All: true, Reasons: why}
}

func (b *walkAlways) stats() Stats { return Stats{Backend: BackendNone, Fallback: b.detail} }

func (b *walkAlways) close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mu.closed = true
	return nil
}
