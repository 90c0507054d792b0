package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ckpt/ckpt/internal/objects"
	"github.com/ckpt/ckpt/internal/walker"
)

// Sentinel errors. Match them with errors.Is; the CLI maps each to an exit code.
var (
	// ErrUnknownRef: a ref names no checkpoint of the task.
	ErrUnknownRef = errors.New("engine: unknown ref")
	// ErrBusy: another process holds the store lock past the lock timeout.
	ErrBusy = errors.New("engine: store busy")
	// ErrWorkspaceMismatch: the store records a different workspace.
	ErrWorkspaceMismatch = errors.New("engine: store belongs to another workspace")
	// ErrCorrupt: the store failed an integrity check (see objects.ErrCorrupt, index.ErrCorrupt).
	ErrCorrupt = errors.New("engine: store corrupt")
	// ErrBadRequest: the caller passed an invalid option or argument.
	ErrBadRequest = errors.New("engine: bad request")
)

// AmbiguousRefError reports a hex prefix that matches several checkpoints.
type AmbiguousRefError struct {
	Ref        string
	Candidates []objects.ID
}

// Error lists the candidates so the user can pick a longer prefix.
func (e *AmbiguousRefError) Error() string {
	ids := make([]string, len(e.Candidates))
	for i, id := range e.Candidates {
		ids[i] = id.Short()
	}
	return fmt.Sprintf("ref %q is ambiguous: it matches %s; use a longer prefix", e.Ref, strings.Join(ids, ", "))
}

// Is makes errors.Is(err, ErrUnknownRef) true: an ambiguous ref resolves to no single checkpoint.
func (e *AmbiguousRefError) Is(target error) bool { return target == ErrUnknownRef }

// BusyError reports who holds the store lock.
type BusyError struct {
	Store  string
	Holder string // "pid 1234 (ckpt save)" as recorded by the holder, or "" when unknown
}

// Error names the holder and what to do.
func (e *BusyError) Error() string {
	who := e.Holder
	if who == "" {
		who = "another process"
	}
	return fmt.Sprintf("store busy: %s holds the lock on %s; wait for it to finish or raise --lock-timeout", who, e.Store)
}

// Unwrap returns ErrBusy.
func (e *BusyError) Unwrap() error { return ErrBusy }

// ErrProtected: the workspace is one ckpt refuses (/, the home directory,
// ~/Desktop, ~/Documents, ~/Downloads).
var ErrProtected = walker.ErrProtected

// Message renders err for people: its text without the package prefixes
// ("engine: ", "objects: ", ...) that sentinel errors carry for callers.
func Message(err error) string {
	s := err.Error()
	for _, p := range []string{"engine: ", "walker: ", "objects: ", "index: ", "diffview: "} {
		s = strings.ReplaceAll(s, p, "")
	}
	return s
}
