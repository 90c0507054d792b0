package engine

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Backoff of automatic pushes that fail: the first retry after
// autoPushMinDelay, each next one twice as late, at most autoPushMaxDelay.
const (
	autoPushMinDelay = time.Second
	autoPushMaxDelay = 5 * time.Minute
)

// AutoPushStatus is the state of the automatic push of a resident Engine.
type AutoPushStatus struct {
	Remote string
	// Pending lists the tasks saved since their last successful push.
	Pending []string
	// LastPush is when a push last succeeded (zero: none yet).
	LastPush time.Time
	// LastError is the last push's failure, "" once a push succeeds;
	// Failures counts the failures in a row and NextRetry is when the
	// next attempt runs.
	LastError string
	Failures  int
	NextRetry time.Time
}

// autoPusher pushes the tasks that saves mark, one at a time, on its own
// goroutine.
type autoPusher struct {
	remote string
	b      Backend
	kick   chan struct{}
	stop   context.CancelFunc
	done   chan struct{}

	mu struct {
		sync.Mutex
		pending map[string]bool
		status  AutoPushStatus
	}
}

// StartAutoPush makes every save that creates a checkpoint push its task
// to remote name over b, in the background: the save returns first, and
// the push runs after it (holding the store's write lock while it runs, as
// any push does). A failed push is retried with exponential backoff (1 s
// doubling to 5 min); saves made meanwhile are pushed by the same attempt.
// AutoPushStatus reports the state. The pushing stops at Close. It fails
// with ErrBadRequest for an unknown remote or when already started.
func (e *Engine) StartAutoPush(b Backend, name string) error {
	if _, err := e.remoteURL(name); err != nil {
		return translate(err, e.storeDir)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &autoPusher{remote: name, b: b, kick: make(chan struct{}, 1), stop: cancel, done: make(chan struct{})}
	p.mu.pending = map[string]bool{}
	p.mu.status.Remote = name
	e.remoteMu.Lock()
	if e.remoteMu.auto != nil {
		e.remoteMu.Unlock()
		cancel()
		return translate(fmt.Errorf("%w: automatic push to %s runs already", ErrBadRequest, e.remoteMu.auto.remote), e.storeDir)
	}
	e.remoteMu.auto = p
	e.remoteMu.Unlock()
	go p.run(ctx, e)
	return nil
}

// AutoPushStatus returns the automatic push's state; false when
// StartAutoPush was not called.
func (e *Engine) AutoPushStatus() (AutoPushStatus, bool) {
	e.remoteMu.Lock()
	p := e.remoteMu.auto
	e.remoteMu.Unlock()
	if p == nil {
		return AutoPushStatus{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.mu.status
	st.Pending = nil
	for t := range p.mu.pending {
		st.Pending = append(st.Pending, t)
	}
	return st, true
}

// autoPushSaved tells the automatic push, if any, that task has a new
// checkpoint.
func (e *Engine) autoPushSaved(task string) {
	e.remoteMu.Lock()
	p := e.remoteMu.auto
	e.remoteMu.Unlock()
	if p == nil {
		return
	}
	p.mu.Lock()
	p.mu.pending[task] = true
	p.mu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// stopAutoPush ends the automatic push and waits for it.
func (e *Engine) stopAutoPush() {
	e.remoteMu.Lock()
	p := e.remoteMu.auto
	e.remoteMu.auto = nil
	e.remoteMu.Unlock()
	if p != nil {
		p.stop()
		<-p.done
	}
}

func (p *autoPusher) run(ctx context.Context, e *Engine) {
	defer close(p.done)
	var retry <-chan time.Time
	delay := autoPushMinDelay
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.kick:
			if retry != nil {
				continue // a failure is backing off; its retry pushes this too
			}
		case <-retry:
			retry = nil
		}
		if err := p.pushPending(ctx, e); err != nil {
			if ctx.Err() != nil {
				return
			}
			p.mu.Lock()
			p.mu.status.LastError = err.Error()
			p.mu.status.Failures++
			p.mu.status.NextRetry = time.Now().Add(delay)
			p.mu.Unlock()
			retry = time.After(delay)
			delay = min(2*delay, autoPushMaxDelay)
			continue
		}
		delay = autoPushMinDelay
	}
}

// pushPending pushes every pending task; a task stays pending until its
// push succeeds.
func (p *autoPusher) pushPending(ctx context.Context, e *Engine) error {
	p.mu.Lock()
	var tasks []string
	for t := range p.mu.pending {
		tasks = append(tasks, t)
	}
	p.mu.Unlock()
	for _, t := range tasks {
		p.mu.Lock()
		delete(p.mu.pending, t) // a save during the push marks it again
		p.mu.Unlock()
		if _, err := e.Push(ctx, p.b, PushOptions{Remote: p.remote, Task: t}); err != nil {
			p.mu.Lock()
			p.mu.pending[t] = true
			p.mu.Unlock()
			return fmt.Errorf("push %s: %w", t, err)
		}
		p.mu.Lock()
		p.mu.status.LastPush, p.mu.status.LastError, p.mu.status.Failures = time.Now(), "", 0
		p.mu.status.NextRetry = time.Time{}
		p.mu.Unlock()
	}
	return nil
}
