// Package testbound bounds how long tests take: how long a test waits for
// code that must never hang (the failure paths of the store used to spin
// for ever), and which tests are long enough to run only when asked
// (LongEnv).
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
