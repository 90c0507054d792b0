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

func newActivity(idle time.Duration, expire func()) *activity {
	a := &activity{idle: idle, expire: expire}
	if idle > 0 {
		a.timer = time.AfterFunc(idle, expire)
	}
	return a
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
