package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/ckpt/ckpt/internal/testbound"
)

// pauseServersAt makes the next servers e starts stop their first
// operation that reaches the engine's pause point (see
// testpause_ckpttest.go, which the tests build ckpt with) until it is
// cancelled. It returns a function that waits until one has stopped there.
func (e *env) pauseServersAt(point string) (waitPaused func()) {
	if os.Getenv(asCLIEnv) == "1" && testOptions == nil {
		e.t.Skip("ckpt is this test binary here (Windows under Wine), built without the ckpttest tag that holds the pause")
	}
	marker := filepath.Join(e.t.TempDir(), "paused")
	e.serverEnv = append(e.serverEnv, fmt.Sprintf("%s=%s:%s", "CKPT_TEST_PAUSE", point, marker))
	return func() {
		e.t.Helper()
		testbound.Until(e.t, "an operation pauses at "+point, func() bool {
			_, err := os.Stat(marker)
			return err == nil
		})
	}
}
