package engine

import "time"

// EventType names a lifecycle event; the set mirrors the checkpoint event map
// hosts already consume (initialize, checkpoint, restore, error).
type EventType string

// Event types.
const (
	EventInitialize EventType = "initialize"
	EventCheckpoint EventType = "checkpoint"
	EventRestore    EventType = "restore"
	EventError      EventType = "error"
	// EventWarning reports something the engine did on its own that the
	// user should know of, such as an interrupted restore it discarded.
	EventWarning EventType = "warning"
	// EventMissedChanges reports changes a re-verification found that the
	// change watcher had not reported (see Engine.Reverify).
	EventMissedChanges EventType = "missed-changes"
)

// Event is delivered to Options.OnEvent. Fields not meaningful for a type
// are zero. Its JSON shapes (snake_case, and the camelCase one Roo-style
// hosts forward) belong to the programs that encode it.
type Event struct {
	Type      EventType
	Workspace string        // initialize
	BaseHash  ID            // initialize: the default task's head, if any
	Created   bool          // initialize: the store was created; checkpoint: a checkpoint was made
	FromHash  ID            // checkpoint: the previous head (zero for a task's first)
	ToHash    ID            // checkpoint: the new head
	Commit    ID            // restore: the checkpoint restored; warning: the checkpoint concerned, if any
	Resumed   bool          // restore: an interrupted restore completed, before a later write (see SettleRestore) or by a Restore resuming it
	Message   string        // warning
	Paths     []string      // missed-changes: the directories whose changes were missed
	Task      string        // checkpoint, restore
	Duration  time.Duration // of the operation
	Err       error         // error
}

func (e *Engine) emit(ev Event) {
	if e.opts.OnEvent != nil {
		e.opts.OnEvent(ev)
	}
}

// report translates the error of a public operation (see translate) and
// emits it as an error event.
func (e *Engine) report(err error, start time.Time) error {
	err = translate(err, e.storeDir)
	if err != nil {
		e.emit(Event{Type: EventError, Err: err, Duration: time.Since(start)})
	}
	return err
}
