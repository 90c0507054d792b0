package restore

import "time"

// Timing splits Apply's time into its phases, in the order it spends them.
type Timing struct {
	// Write: the removals, the directories and the files' contents, each
	// file made durable before its rename when syncEach.
	Write time.Duration
	// Place: the staged files' syncfs and renames (none with syncEach),
	// and the directories' modes.
	Place time.Duration
	// Flush: the last flush of what changed (the directories' syncs or a
	// syncfs), with Alongside beside it.
	Flush time.Duration
}

// Laps starts a stopwatch: each call of the function it returns gives the
// time since the previous call (the first: since Laps).
func Laps() func() time.Duration {
	last := time.Now()
	return func() time.Duration {
		now := time.Now()
		d := now.Sub(last)
		last = now
		return d
	}
}
