package watch

// Op is what one recorded event did to the entry it names.
type Op uint8

// Event operations.
const (
	OpCreated   Op = iota + 1 // the entry was created
	OpWritten                 // its content was written, or a file written to was closed
	OpAttrib                  // its mode, owner, link count or times changed
	OpRemoved                 // it was removed (for Dir itself: Dir was deleted)
	OpMovedFrom               // it was renamed away (Cookie pairs it with its OpMovedTo)
	OpMovedTo                 // something was renamed onto it
	OpOther                   // anything else (Dir itself moved, its watch ended)
)

// Event is one event an Audit recorded.
type Event struct {
	Dir    string // root-relative directory holding the entry ("" for the root)
	Name   string // the entry's name; "" for an event about Dir itself
	Op     Op
	IsDir  bool   // the entry is a directory
	Cookie uint32 // equal in an OpMovedFrom and the OpMovedTo of the same rename
}

// Path is the root-relative path of the entry the event names.
func (e Event) Path() string { return joinRel(e.Dir, e.Name) }

// maxAuditEvents bounds what one audit records: an operation that raises
// more is not followed event by event (its audit is incomplete).
const maxAuditEvents = 1 << 14

// Audit records every event the watcher hears between Watcher.StartAudit
// and End, in the order the kernel queued them: what a caller needs to
// tell its own writes from anyone else's, which Changes, a summary by
// directory, cannot.
type Audit struct {
	b   auditor
	log *auditLog
}

// auditor is a backend that can record events (the Linux one).
type auditor interface {
	// startAudit takes the changes so far, as changes does, and records
	// every later event into the returned log, atomically.
	startAudit() (*auditLog, Changes)
	// endAudit takes the changes so far, as changes does, and stops
	// recording into log, atomically.
	endAudit(log *auditLog) Changes
}

// auditLog is what an audit recorded. The backend writes it under its lock
// until endAudit.
type auditLog struct {
	events   []Event
	complete bool // no event may have been lost
}

// add records e, or marks the log incomplete once it holds maxAuditEvents.
func (l *auditLog) add(e Event) {
	if len(l.events) >= maxAuditEvents {
		l.complete = false
		return
	}
	l.events = append(l.events, e)
}

// StartAudit takes the changes reported so far, exactly as Changes does,
// and starts recording every later event; no event falls between the two.
// The Audit is nil where the backend cannot record events (every backend
// but inotify): the caller then has only Changes.
func (w *Watcher) StartAudit() (*Audit, Changes) {
	au, ok := w.b.(auditor)
	if !ok {
		return nil, w.Changes()
	}
	log, c := au.startAudit()
	normalizeChanges(&c)
	return &Audit{b: au, log: log}, c
}

// End stops the recording and returns the events recorded (every event of
// an operation that completed before the call among them) together with
// the changes since StartAudit, exactly as Changes would return them (the
// next Changes does not report them again); no event falls between the
// two. complete is false when an event may be missing from events: the
// queue overflowed or the watcher was reset, an event came from a watch no
// longer mapped to a directory (but for the last events of the watch of a
// directory whose deletion was recorded already, which are not), or there
// were more than maxAuditEvents.
func (a *Audit) End() (events []Event, complete bool, c Changes) {
	c = a.b.endAudit(a.log)
	normalizeChanges(&c)
	return a.log.events, a.log.complete, c
}
