package protocol

import (
	"errors"

	"github.com/ckpt/ckpt/engine"
)

// UsageError is a mistake in a command line or in a method's params
// (exit 2, JSON-RPC Invalid Params): the message says what to change.
type UsageError string

func (u UsageError) Error() string { return string(u) }

// ExitCode maps an error to the CLI's exit code.
func ExitCode(err error) int {
	var (
		usage  UsageError
		remote *RemoteError
	)
	switch {
	case errors.As(err, &remote):
		return remote.Data.ExitCode
	case errors.As(err, &usage), errors.Is(err, engine.ErrUnknownRef), errors.Is(err, engine.ErrBadRequest):
		return ExitUsage
	case errors.Is(err, engine.ErrBusy):
		return ExitBusy
	case errors.Is(err, engine.ErrProtected), errors.Is(err, engine.ErrWorkspaceMismatch), errors.Is(err, engine.ErrStoreHoldsWorkspace),
		errors.Is(err, engine.ErrWrongKey):
		return ExitRefused
	case errors.Is(err, engine.ErrCorrupt):
		return ExitCorrupted
	}
	return ExitError
}

// Exit codes of the CLI contract.
const (
	ExitOK        = 0
	ExitError     = 1 // also: differences found under diff --exit-code
	ExitUsage     = 2 // bad usage or unknown ref
	ExitBusy      = 3
	ExitRefused   = 4 // refused workspace, store/workspace mismatch, or a remote's wrong key
	ExitCorrupted = 5
	ExitConflicts = 6 // restore finished with conflicts: the workspace does not fully match the target
)
