// Package testbound bounds how long tests take: how long a test waits for
// code that must never hang (the failure paths of the store used to spin
// for ever), which tests are long enough to run only when asked
// (LongEnv), and how many times a child process is started before its
// start counts as a failure (Start).
package testbound

import (
	"testing"
	"time"
)

// Within fails t if fn does not return within limit. fn runs on its own
// goroutine; on a timeout it is left running, as nothing can stop it.
func Within(t testing.TB, limit time.Duration, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("still running after %v", limit)
	}
}

// Hang is how long a test waits for what must happen before it calls the
// wait a hang: far beyond what the slowest run takes (two loaded cores,
// -race), so that it never decides a test that is only slow, and short
// enough to fail well inside go test's ten-minute limit.
const Hang = 3 * time.Minute

// Until polls cond until it holds and fails t, naming what, if it does not
// within Hang.
func Until(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(Hang)
	for pause := time.Millisecond; !cond(); pause = min(2*pause, 50*time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v", what, Hang)
		}
		time.Sleep(pause)
	}
}
