package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ckpt/ckpt/diffview"
	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/objects"
	"github.com/ckpt/ckpt/walker"
)

// Sentinel errors. Match them with errors.Is; the typed errors below carry
// the details (and match their sentinel too). No error text of this package
// advises a command or a flag: that is the caller's to add.
var (
	// ErrUnknownRef: a ref names no checkpoint of the task, or a task does not exist.
	ErrUnknownRef = errors.New("unknown ref")
	// ErrBusy: another holder keeps the store lock past the lock timeout (see *BusyError).
	ErrBusy = errors.New("store busy")
	// ErrWorkspaceMismatch: the store records a different workspace (see *WorkspaceMismatchError).
	ErrWorkspaceMismatch = errors.New("store belongs to another workspace")
	// ErrCorrupt: the store failed an integrity check (see *CorruptError).
	ErrCorrupt = errors.New("store corrupt")
	// ErrBadRequest: the caller passed an invalid option or argument.
	ErrBadRequest = errors.New("bad request")
	// ErrProtected: the workspace is one ckpt refuses (/, the home directory,
	// ~/Desktop, ~/Documents, ~/Downloads).
	ErrProtected = errors.New("refusing to checkpoint a protected directory")
	// ErrStoreHoldsWorkspace: the store directory is the workspace or one of
	// its ancestors, where a restore would delete the store's own files. A
	// store inside the workspace is fine: saves exclude it.
	ErrStoreHoldsWorkspace = errors.New("the store may not be the workspace or a directory above it")
)

// AmbiguousRefError reports a hex prefix that matches several checkpoints.
// It matches ErrUnknownRef: an ambiguous ref resolves to no single checkpoint.
type AmbiguousRefError struct {
	Ref        string
	Candidates []ID
}

// Error lists the candidates so the user can pick a longer prefix.
func (e *AmbiguousRefError) Error() string {
	short := make([]string, len(e.Candidates))
	for i, id := range e.Candidates {
		short[i] = id.Short()
	}
	return fmt.Sprintf("ref %q is ambiguous: it matches %s; use a longer prefix", e.Ref, strings.Join(short, ", "))
}

// Unwrap returns ErrUnknownRef.
func (e *AmbiguousRefError) Unwrap() error { return ErrUnknownRef }

// BusyError reports who holds the store lock. It matches ErrBusy. An Engine
// of this process that was never closed is a holder like any other.
type BusyError struct {
	Store  string
	Holder string // "pid 1234 (ckpt save)" as recorded by the holder, or "" when unknown
}

// Error names the holder.
func (e *BusyError) Error() string {
	who := e.Holder
	if who == "" {
		who = "another process"
	}
	return fmt.Sprintf("store busy: %s holds the lock on %s", who, e.Store)
}

// Unwrap returns ErrBusy.
func (e *BusyError) Unwrap() error { return ErrBusy }

// WorkspaceMismatchError reports a store that records another workspace.
// It matches ErrWorkspaceMismatch.
type WorkspaceMismatchError struct {
	Store     string
	Recorded  string // the workspace the store belongs to
	Workspace string // the workspace it was opened for
}

// Error names both workspaces.
func (e *WorkspaceMismatchError) Error() string {
	return fmt.Sprintf("%v: store %s records workspace %s, not %s", ErrWorkspaceMismatch, e.Store, e.Recorded, e.Workspace)
}

// Unwrap returns ErrWorkspaceMismatch.
func (e *WorkspaceMismatchError) Unwrap() error { return ErrWorkspaceMismatch }

// CorruptError reports a store that failed an integrity check. It matches
// ErrCorrupt and the internal cause.
type CorruptError struct {
	Store  string // the store directory
	Object ID     // the damaged object, zero when the failure names none
	Err    error
}

// Error names the failure and the store.
func (e *CorruptError) Error() string {
	obj := ""
	if !e.Object.IsZero() {
		obj = " " + e.Object.Short() + ":"
	}
	return fmt.Sprintf("%v:%s %s (store at %s)", ErrCorrupt, obj, plainText(e.Err), e.Store)
}

// Unwrap returns ErrCorrupt and the cause.
func (e *CorruptError) Unwrap() []error { return []error{ErrCorrupt, e.Err} }

// WrongTaskError reports a checkpoint that belongs to another task than
// the one an operation was asked to change. It matches ErrBadRequest.
type WrongTaskError struct {
	Checkpoint ID
	Task       string // the checkpoint's task
	Want       string // the task the operation was given
}

// Error names both tasks.
func (e *WrongTaskError) Error() string {
	return fmt.Sprintf("%v: checkpoint %s belongs to task %q, not %q", ErrBadRequest, e.Checkpoint.Short(), e.Task, e.Want)
}

// Unwrap returns ErrBadRequest.
func (e *WrongTaskError) Unwrap() error { return ErrBadRequest }

// BackgroundError is an error of the store's background work (a failed
// index flush or compaction) that no operation returns: it arrives only
// as an EventError.
type BackgroundError struct{ Err error }

// Error says where the failure came from.
func (e *BackgroundError) Error() string { return "index background work: " + plainText(e.Err) }

// Unwrap returns the cause.
func (e *BackgroundError) Unwrap() error { return e.Err }

// storeError marks the internal packages' integrity failures as a
// *CorruptError, so callers can tell them apart.
func storeError(err error, storeDir string) error {
	var ce *CorruptError
	if err == nil || errors.As(err, &ce) || !isInternalCorrupt(err) {
		return err
	}
	return &CorruptError{Store: storeDir, Err: err}
}

// isInternalCorrupt reports whether err is an internal package's integrity failure.
func isInternalCorrupt(err error) bool {
	return errors.Is(err, objects.ErrCorrupt) || errors.Is(err, index.ErrCorrupt)
}

// publicError is an internal error at the public boundary: it matches the
// public sentinel and the original, and reads as the original without the
// internal packages' prefixes.
type publicError struct {
	public error // nil when only the text needed translating
	err    error
}

func (p *publicError) Error() string { return plainText(p.err) }

func (p *publicError) Unwrap() []error {
	if p.public == nil {
		return []error{p.err}
	}
	return []error{p.public, p.err}
}

// translate is the one place where errors leave the engine: an internal
// sentinel is matched to its public one, and the text loses the internal
// packages' prefixes. Every public method returns its error through it.
func translate(err error) error {
	if err == nil {
		return nil
	}
	var public error
	switch {
	case errors.Is(err, walker.ErrProtected):
		public = ErrProtected
	case errors.Is(err, walker.ErrUnknownProfile), errors.Is(err, diffview.ErrBadFilter):
		public = ErrBadRequest
	}
	if public == nil && plainText(err) == err.Error() {
		return err
	}
	return &publicError{public: public, err: err}
}

// internalPrefixes start the texts of the internal packages' sentinels.
var internalPrefixes = []string{"walker: ", "objects: ", "index: ", "diffview: "}

// plainText is err's text without the internal packages' prefixes.
func plainText(err error) string {
	s := err.Error()
	for _, p := range internalPrefixes {
		s = strings.ReplaceAll(s, p, "")
	}
	return s
}
