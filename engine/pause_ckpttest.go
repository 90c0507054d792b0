//go:build ckpttest

package engine

import "context"

// SetTestPause makes the Engine opened with o call pause at each pause
// point: "restore-journaled" (a restore wrote its journal and changed
// nothing yet) and "save-scanned" (a save scanned the workspace and
// recorded nothing yet). The operation goes on
// when pause returns, and a save then fails if ctx ended. It exists only in
// builds with the ckpttest tag, which the CLI's tests build ckpt with, so
// that they can stop a server's restore or save at a known point.
func SetTestPause(o *Options, pause func(ctx context.Context, point string)) { o.hooks.pause = pause }
