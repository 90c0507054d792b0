//go:build ckpttest

package engine

import "time"

// SetTestReverifyInterval makes a watched Engine opened with o re-verify
// every d instead of every five minutes (see Reverify). It exists only in
// builds with the ckpttest tag, which the CLI's tests build ckpt with, so
// that they can see a server find a missed change without waiting minutes.
func SetTestReverifyInterval(o *Options, d time.Duration) { o.hooks.reverifyInterval = d }
