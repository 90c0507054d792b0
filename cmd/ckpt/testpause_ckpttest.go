//go:build ckpttest

package main

import (
	"context"
	"os"
	"strings"
	"sync/atomic"

	"github.com/ckpt/ckpt/engine"
)

// testPauseEnv, as POINT:FILE, makes the first operation of this process
// that reaches the engine's pause point POINT (see engine.SetTestPause)
// create FILE and wait there until it is cancelled: a test then knows the
// operation is in progress, and ends it as a user would (a signal, a
// cancelled request, a stopped server).
const testPauseEnv = "CKPT_TEST_PAUSE"

func init() {
	point, file, ok := strings.Cut(os.Getenv(testPauseEnv), ":")
	if !ok {
		return
	}
	var paused atomic.Bool
	addTestOptions(func(o *engine.Options) {
		engine.SetTestPause(o, func(ctx context.Context, at string) {
			if at != point || !paused.CompareAndSwap(false, true) {
				return
			}
			if err := os.WriteFile(file, nil, 0o600); err != nil {
				panic(err)
			}
			<-ctx.Done()
		})
	})
}

// addTestOptions makes testOptions apply adjust too, after what the test
// hooks whose init ran before set.
func addTestOptions(adjust func(*engine.Options)) {
	before := testOptions
	testOptions = func(o *engine.Options) {
		if before != nil {
			before(o)
		}
		adjust(o)
	}
}
