package index

import (
	"errors"
	"fmt"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/ckpt/ckpt/objects"
)

// health tracks the failures pebble reports outside the API's return
// values: Fatalf calls (a failed MANIFEST or WAL write, an invariant broken
// by damaged tables), data corruption found while reading a table, and
// failed flushes and compactions, which pebble would otherwise retry for
// ever. The first such failure poisons the DB: every later Commit, and any
// Commit or Close waiting on pebble's background work, returns it instead
// of blocking.
type health struct {
	mu struct {
		sync.Mutex
		err     error // first fatal failure, nil while healthy
		stalled bool  // pebble is holding writes back until a flush or compaction succeeds
		wedged  bool  // a pebble goroutine is parked for good (gateFS)
		stuck   bool  // stuck is closed
	}
	failed chan struct{} // closed when err is set
	// stuck is closed once writes are stalled on a DB that failed, or the
	// DB is wedged: a commit waiting then never returns.
	stuck        chan struct{}
	released     chan struct{} // closed by release
	releaseOnce  sync.Once
	onBackground func(error)
}

func newHealth(onBackground func(error)) *health {
	return &health{failed: make(chan struct{}), stuck: make(chan struct{}), released: make(chan struct{}), onBackground: onBackground}
}

// setStalled records the start or end of a pebble write stall.
func (h *health) setStalled(on bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.mu.stalled = on
	h.checkStuckLocked()
}

func (h *health) checkStuckLocked() {
	if h.mu.err != nil && (h.mu.stalled || h.mu.wedged) && !h.mu.stuck {
		h.mu.stuck = true
		close(h.stuck)
	}
}

// fail records err as the DB's fatal failure unless one is already
// recorded. Corruption is described as such even when it first surfaced
// as a failed flush or compaction, and a report naming the damaged file
// replaces one that does not.
func (h *health) fail(err error) {
	if !errors.Is(err, objects.ErrCorrupt) && pebble.IsCorruptionError(err) {
		err = &damageError{Err: err}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.mu.err == nil {
		h.mu.err = err
		close(h.failed)
		h.checkStuckLocked()
		return
	}
	var old, ce *damageError
	if errors.As(err, &ce) && ce.Path != "" && (!errors.As(h.mu.err, &old) || old.Path == "") {
		h.mu.err = err
	}
}

// err returns the recorded fatal failure, or nil.
func (h *health) err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.mu.err
}

// report passes a non-fatal background error to the Options callback.
func (h *health) report(err error) {
	if h.onBackground != nil {
		h.onBackground(err)
	}
}

// damageError reports index damage pebble detected: a table, log or
// MANIFEST that fails its checksums or does not parse. Path names the
// damaged file when pebble said which one. It is marked with
// objects.ErrCorrupt.
type damageError struct {
	Path string // "" when pebble did not name the file
	Err  error
}

// Error names the file, then pebble's description.
func (e *damageError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("index damaged: %v", e.Err)
	}
	return fmt.Sprintf("index file %s is damaged: %v", e.Path, e.Err)
}

// Is reports whether target is objects.ErrCorrupt.
func (e *damageError) Is(target error) bool { return target == objects.ErrCorrupt }

// Unwrap returns pebble's error.
func (e *damageError) Unwrap() error { return e.Err }

// logger is the pebble Logger of one DB. Informational messages are
// dropped; error messages go to Options.OnBackgroundError. Fatalf, which
// pebble calls when it cannot go on (often on one of its own background
// goroutines, where a panic could not be recovered), poisons the DB and
// returns: pebble returns the error after it on every path that matters
// here, and the poisoned DB refuses further writes.
type logger struct{ h *health }

func (logger) Infof(string, ...any) {}

func (l logger) Errorf(format string, args ...any) {
	l.h.report(fmt.Errorf(format, args...))
}

func (l logger) Fatalf(format string, args ...any) {
	fe := &fatalError{msg: fmt.Sprintf(format, args...)}
	for _, a := range args {
		if e, ok := a.(error); ok {
			fe.causes = append(fe.causes, e)
		}
	}
	var err error = fe
	if pebble.IsCorruptionError(fe) {
		err = &damageError{Err: fe}
	}
	l.h.fail(err)
	l.h.report(err)
}

// fatalError is what pebble reported through Fatalf; it unwraps to the
// errors among the message's arguments (a failed write's *PathError, say).
type fatalError struct {
	msg    string
	causes []error
}

func (e *fatalError) Error() string   { return "pebble fatal error: " + e.msg }
func (e *fatalError) Unwrap() []error { return e.causes }

// eventListener turns pebble's failure events into health updates.
func (h *health) eventListener() *pebble.EventListener {
	return &pebble.EventListener{
		BackgroundError: h.report,
		WriteStallBegin: func(pebble.WriteStallBeginInfo) { h.setStalled(true) },
		WriteStallEnd:   func() { h.setStalled(false) },
		DataCorruption: func(info pebble.DataCorruptionInfo) {
			err := &damageError{Path: info.Path, Err: info.Details}
			h.fail(err)
			h.report(err)
		},
		FlushEnd: func(info pebble.FlushInfo) {
			// A flush whose keys were all deleted writes no table; pebble
			// reports that success with an unexported "empty table" error.
			if info.Err != nil && info.Err.Error() != "pebble: empty table" {
				h.fail(fmt.Errorf("index flush: %w", info.Err))
			}
		},
		CompactionEnd: func(info pebble.CompactionInfo) {
			if info.Err != nil && !errors.Is(info.Err, pebble.ErrCancelledCompaction) {
				h.fail(fmt.Errorf("index compaction: %w", info.Err))
			}
		},
		ManifestCreated: func(info pebble.ManifestCreateInfo) {
			if info.Err != nil {
				h.fail(fmt.Errorf("create %s: %w", info.Path, info.Err))
			}
		},
		WALCreated: func(info pebble.WALCreateInfo) {
			if info.Err != nil {
				h.fail(fmt.Errorf("create %s: %w", info.Path, info.Err))
			}
		},
	}
}

// recovered converts a panic raised inside pebble (a nil dereference or
// bounds check on a damaged block, an invariant check) into an error: the
// recorded corruption or fatal failure when there is one, else the panic
// value wrapped as corruption, since pebble panics only on data it cannot
// make sense of. It is deferred with the caller's named error result.
func (h *health) recovered(op string, errp *error) {
	r := recover()
	if r == nil {
		return
	}
	err := h.err()
	if err == nil {
		err = &damageError{Err: fmt.Errorf("%s: pebble panicked: %v", op, r)}
		h.fail(err)
	}
	*errp = errors.Join(*errp, err)
}

// classify wraps a pebble error: corruption becomes a *damageError (naming
// the file pebble recorded as damaged, if it did), a recorded fatal failure
// is preferred to the symptom pebble returned, anything else is returned
// as is.
func (h *health) classify(err error) error {
	if err == nil {
		return nil
	}
	var ce *damageError
	if errors.As(err, &ce) {
		return err
	}
	if fatal := h.err(); fatal != nil {
		// The recorded failure is the cause; err is pebble's symptom of it.
		return fatal
	}
	if pebble.IsCorruptionError(err) {
		h.fail(err)
		return h.err()
	}
	return err
}
