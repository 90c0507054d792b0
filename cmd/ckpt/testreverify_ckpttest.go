//go:build ckpttest

package main

import (
	"os"
	"time"

	"github.com/ckpt/ckpt/engine"
)

// testReverifyEnv, as a duration, makes the watched engines of this process
// re-verify that often (see engine.SetTestReverifyInterval), so that a
// test sees a server find and report a change its watcher missed.
const testReverifyEnv = "CKPT_TEST_REVERIFY_INTERVAL"

func init() {
	d, err := time.ParseDuration(os.Getenv(testReverifyEnv))
	if err != nil {
		return
	}
	addTestOptions(func(o *engine.Options) { engine.SetTestReverifyInterval(o, d) })
}
