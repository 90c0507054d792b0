package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ckpt/ckpt/diffview"
	"github.com/ckpt/ckpt/engine/internal/remotesync"
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
	// ErrCorrupt: the store, or a remote, failed an integrity check (see
	// *CorruptError). It is objects.ErrCorrupt, the one mark every layer
	// puts on the damage it finds.
	ErrCorrupt = objects.ErrCorrupt
	// ErrBadRequest: the caller passed an invalid option or argument.
	ErrBadRequest = errors.New("bad request")
	// ErrProtected: the workspace is one ckpt refuses (/, the home directory,
	// ~/Desktop, ~/Documents, ~/Downloads).
	ErrProtected = errors.New("refusing to checkpoint a protected directory")
	// ErrStoreHoldsWorkspace: the store directory is the workspace or one of
	// its ancestors, where a restore would delete the store's own files. A
	// store inside the workspace is fine: saves exclude it.
	ErrStoreHoldsWorkspace = errors.New("the store may not be the workspace or a directory above it")
	// ErrNotWritable: Open, for a writer, found the store's directories
	// unwritable (permissions, a read-only file system). The same store
	// opens for reading (Options.ReadOnly).
	ErrNotWritable = errors.New("store is not writable")
	// ErrNoBisection: an end of a bisect left to its default does not
	// hold (the test passes at the task's head, or fails at its first
	// checkpoint): there is no first bad checkpoint to find between them.
	ErrNoBisection = errors.New("nothing to bisect")
	// ErrRemoteRolledBack: a remote's head is older than one this store
	// saw there (the remote was emptied, or restored from an older copy);
	// it matches ErrCorrupt too, and the *CorruptError names the remote.
	ErrRemoteRolledBack = remotesync.ErrRolledBack
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
// ErrCorrupt and its cause. Every error an Engine method returns that
// matches ErrCorrupt is, or wraps, a *CorruptError.
type CorruptError struct {
	Store  string // the store directory, or "remote NAME" for a remote's damage
	Object ID     // the damaged object, zero when the failure names none
	// OnRemote says the damage is in a remote's copy, which a pull, clone
	// or fetch read: this store is sound, and verifying it finds nothing.
	OnRemote bool
	Err      error
}

// Error names the failure and the store.
func (e *CorruptError) Error() string {
	obj := ""
	if !e.Object.IsZero() {
		obj = " " + e.Object.Short() + ":"
	}
	return fmt.Sprintf("%v:%s %v (store at %s)", ErrCorrupt, obj, e.Err, e.Store)
}

// Is reports whether target is ErrCorrupt.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// Unwrap returns the cause.
func (e *CorruptError) Unwrap() error { return e.Err }

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
func (e *BackgroundError) Error() string { return "index background work: " + e.Err.Error() }

// Unwrap returns the cause.
func (e *BackgroundError) Unwrap() error { return e.Err }

// publicError is an internal error at the public boundary: it matches the
// public sentinel and the original, and reads as the original.
type publicError struct {
	public error
	err    error
}

func (p *publicError) Error() string { return p.err.Error() }

func (p *publicError) Unwrap() []error { return []error{p.public, p.err} }

// translate is the one place where errors leave the engine: damage found
// by any layer (marked with ErrCorrupt) becomes a *CorruptError naming
// storeDir unless it is one already, and an internal package's sentinel is
// matched to its public one. Every public method returns its error
// through it; storeDir is "" where no store is open yet.
func translate(err error, storeDir string) error {
	var ce *CorruptError
	var pe *publicError
	switch {
	case err == nil || errors.As(err, &pe):
		return err
	case errors.Is(err, ErrCorrupt) && !errors.As(err, &ce) && storeDir != "":
		return &CorruptError{Store: storeDir, Err: err}
	case errors.Is(err, walker.ErrProtected):
		return &publicError{public: ErrProtected, err: err}
	case errors.Is(err, walker.ErrUnknownProfile), errors.Is(err, diffview.ErrBadFilter):
		return &publicError{public: ErrBadRequest, err: err}
	}
	return err
}
