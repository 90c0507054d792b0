package server

import (
	"sync"
	"time"
)

// activity ends an idle server: the timer runs while no client is connected.
type activity struct {
	mu     sync.Mutex
	n      int
	idle   time.Duration
	timer  *time.Timer // nil when idle is 0
	expire func()
}

// newActivity calls expire once no client has been connected for idle
// (never when idle is 0). expire must not block: it runs under the lock
// begin takes, so a client that begins as the timer fires either stops the
// expiry or begins after it (and is then served by a server that stops).
func newActivity(idle time.Duration, expire func()) *activity {
	a := &activity{idle: idle, expire: expire}
	if idle > 0 {
		a.timer = time.AfterFunc(idle, a.fire)
	}
	return a
}

// fire expires the server unless a client began after the timer went off.
func (a *activity) fire() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.n == 0 {
		a.expire()
	}
}

func (a *activity) begin() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.n++
	if a.timer != nil {
		a.timer.Stop()
	}
}

func (a *activity) end() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.n--
	if a.n == 0 && a.timer != nil {
		a.timer.Reset(a.idle)
	}
}

func (a *activity) stop() {
	if a.timer != nil {
		a.timer.Stop()
	}
}
