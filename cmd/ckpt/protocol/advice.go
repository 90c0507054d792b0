package protocol

import (
	"errors"

	"github.com/ckpt/ckpt/engine"
)

// Message is err's text for the user followed by the advice its type
// implies (see advice).
func Message(err error) string { return err.Error() + advice(err) }

// AdvisedError is Err with the advice a command knows better than its
// type implies (a clone's wrong key, before any store records one).
// Advice starts with its separator ("; ...").
type AdvisedError struct {
	Err    error
	Advice string
}

func (e *AdvisedError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *AdvisedError) Unwrap() error { return e.Err }

// advice is what the user can do about err with ckpt's own commands and
// flags: an AdvisedError's, or what the engine's typed errors imply (""
// when there is nothing to add): the engine names no command or flag
// itself.
func advice(err error) string {
	var (
		advised  *AdvisedError
		busy     *engine.BusyError
		mismatch *engine.WorkspaceMismatchError
		wrong    *engine.WrongTaskError
		pending  *engine.PendingRestoreError
		corrupt  *engine.CorruptError
	)
	switch {
	case errors.As(err, &advised):
		return advised.Advice
	case errors.As(err, &pending):
		return advice(pending.Err)
	case errors.Is(err, engine.ErrRemoteRolledBack):
		return "; if that remote was emptied or restored on purpose, remove it (`ckpt remote remove`) and add it again; this store is not damaged"
	case errors.As(err, &corrupt) && corrupt.OnRemote:
		return "; the damage is in the remote's copy, not in this store"
	case errors.Is(err, engine.ErrCorrupt):
		return "; run `ckpt verify`"
	case errors.As(err, &busy):
		return "; wait for it to finish or raise --lock-timeout"
	case errors.As(err, &mismatch):
		return "; pass --store with another directory"
	case errors.As(err, &wrong):
		return "; pass --task " + wrong.Task
	case errors.Is(err, engine.ErrWrongKey):
		return "; check the remote's --key-file or --passphrase-env (`ckpt remote list` shows them)"
	case errors.Is(err, engine.ErrRemoteChanged):
		return "; another client replaced it meanwhile: run the command again"
	}
	return ""
}
