package engine

import "context"

// Pause points: where an Engine built for the CLI's tests (the ckpttest
// build tag, see SetTestPause) can be made to wait.
const (
	// pauseRestoreJournaled is after a restore wrote its journal, before
	// its first change to the workspace.
	pauseRestoreJournaled = "restore-journaled"
	// pauseSaveScanned is after a save scanned the workspace, before it
	// records the checkpoint.
	pauseSaveScanned = "save-scanned"
)

// pauseAt calls the pause hook at point, when a test set one, and returns
// ctx's error after it (nil without a hook).
func (e *Engine) pauseAt(ctx context.Context, point string) error {
	if e.opts.hooks.pause == nil {
		return nil
	}
	e.opts.hooks.pause(ctx, point)
	return ctx.Err()
}
