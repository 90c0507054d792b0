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
)

// Event is delivered to Options.OnEvent. Fields not meaningful for a type are zero.
type Event struct {
	Type      EventType     `json:"type"`
	Workspace string        `json:"workspaceDir,omitempty"` // initialize
	BaseHash  string        `json:"baseHash,omitempty"`     // initialize: the default task's head, if any
	Created   bool          `json:"created,omitempty"`      // initialize: the store was created; checkpoint: a checkpoint was made
	FromHash  string        `json:"fromHash,omitempty"`     // checkpoint: the previous head
	ToHash    string        `json:"toHash,omitempty"`       // checkpoint: the new head
	Commit    string        `json:"commitHash,omitempty"`   // restore: the checkpoint restored
	Task      string        `json:"task,omitempty"`
	Duration  time.Duration `json:"duration"`
	Err       error         `json:"-"` // error
}

func (e *Engine) emit(ev Event) {
	if e.opts.OnEvent != nil {
		e.opts.OnEvent(ev)
	}
}

// report emits an error event for a failed operation and returns err unchanged.
func (e *Engine) report(err error, start time.Time) error {
	if err != nil {
		e.emit(Event{Type: EventError, Err: err, Duration: time.Since(start)})
	}
	return err
}
